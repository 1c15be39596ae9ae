"""`dbstand run python --file bench.py`: your own function through the chosen stacks."""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.console import split_list
from dbstand.errors import UserError
from dbstand.modes.spec import expand_modes
from dbstand.workloads.base import Case
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.protocols import with_probes
from dbstand.workloads.python.options import PythonOptions
from dbstand.workloads.run_common import (
    ENGINE_DEFAULTS,
    EngineArgs,
    Loop,
    Modes,
    Pin,
    RunShared,
    Targets,
    check_loop,
    default_stacks,
    run_command,
    run_targets,
)


@run_command()
def run_python(
    file: Annotated[str, typer.Option(
        "--file", "-f", help="The bench file: operation(conn, rng) [async], optional "
                             "setup(conn), teardown(conn) (docs/python-bench.md)")],
    target: Targets = None,
    stack: Annotated[str | None, typer.Option(
        help="Stack(s) whose connection operation() gets: psycopg, psycopg2, asyncpg, "
             "psycopg-async, pymysql, sqlite3, ...")] = None,
    mode: Modes = "sync",
    probes: Annotated[bool, typer.Option(help="Sample client/server CPU and statements")]
        = True,
    pin: Pin = True,
    revs: Annotated[int, typer.Option(help="Operations per iteration")] = 1000,
    engine: EngineArgs = ENGINE_DEFAULTS,
    latency: Annotated[str, typer.Option(help="Per-operation latency: auto, all, off or "
                                              "every:K")] = "auto",
    loop: Loop = "asyncio",
    seed: Annotated[int, typer.Option(help="Seed of each connection's rng")] = 42,
    *,
    shared: RunShared,
) -> None:
    """python: your own function, one call per operation, on dbstand's connections."""
    from dbstand.workloads.python.workload import PythonWorkload

    config = engine.config(revs, latency, seed)
    check_loop(loop)
    options = PythonOptions(file=file, pin=pin, profile=shared.profile)
    options.check()
    workload = PythonWorkload(options)
    asked = expand_modes(split_list(mode, "--mode"))
    with run_targets(target) as targets:
        names = split_list(stack, "--stack") or default_stacks(targets, "python")
        cases = []
        for t in targets:
            for name in names:
                spec = get_stack(name)
                fits = [m for m in asked if m.is_async == spec.is_async]
                if not fits:
                    raise UserError(f"stack {name!r} can run none of the modes "
                                    f"{', '.join(m.name for m in asked)}")
                cases += [Case("python", name, t, m.name, "operation",
                               {**options.params(), "loop": loop}) for m in fits]
        results = shared.execute(workload, with_probes(cases, probes), config, "python")
    shared.finish(results)
