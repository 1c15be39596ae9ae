"""`dbstand run python --file bench.py`: your own function through the chosen stacks."""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_list
from dbstand.engine.config import EngineConfig
from dbstand.errors import UserError
from dbstand.modes.spec import expand_modes
from dbstand.workloads.base import Case
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.protocols import with_probes
from dbstand.workloads.python.options import PythonOptions
from dbstand.workloads.run_common import (
    Export,
    Html,
    Output,
    Profile,
    default_stacks,
    finish,
    results_path,
    run_targets,
)


def run_python(
    file: Annotated[str, typer.Option(
        "--file", "-f", help="The bench file: operation(conn, rng) [async], optional "
                             "setup(conn), teardown(conn) (docs/python-bench.md)")],
    target: Annotated[str | None, typer.Option(
        help="Target URL(s), comma-separated; default: in-memory SQLite")] = None,
    stack: Annotated[str | None, typer.Option(
        help="Stack(s) whose connection operation() gets: psycopg, psycopg2, asyncpg, "
             "psycopg-async, pymysql, sqlite3, ...")] = None,
    mode: Annotated[str, typer.Option(
        help="Modes: sync, threads:N, asyncio:N, processes:P[xasyncio:N]; each stack "
             "runs the ones it can")] = "sync",
    probes: Annotated[bool, typer.Option(help="Sample client/server CPU and statements")]
        = True,
    pin: Annotated[bool, typer.Option(help="Pin client and server CPUs (as kv)")] = True,
    revs: Annotated[int, typer.Option(help="Operations per iteration")] = 1000,
    warmup: Annotated[int, typer.Option(help="Uncounted warm-up iterations")] = 1,
    min_iterations: Annotated[int, typer.Option(help="Iterations before stopping")] = 5,
    max_iterations: Annotated[int, typer.Option(help="Cap on iterations")] = 30,
    max_time: Annotated[float, typer.Option(help="Seconds per case before stopping")] = 60.0,
    ci: Annotated[float, typer.Option(help="Stop when the 95% CI is within ±CI %")] = 3.0,
    interval: Annotated[float, typer.Option(
        help="Seconds per interval of the recorded time series; 0: none")] = 1.0,
    latency: Annotated[str, typer.Option(help="Per-operation latency: auto, all, off or "
                                              "every:K")] = "auto",
    loop: Annotated[str, typer.Option(help="Event loop for asyncio modes: asyncio, "
                                           "uvloop")] = "asyncio",
    seed: Annotated[int, typer.Option(help="Seed of each connection's rng")] = 42,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
) -> None:
    """python: your own function, one call per operation, on dbstand's connections."""
    from dbstand.workloads.python.workload import PythonWorkload

    config = EngineConfig(revs=revs, warmup=warmup, min_iterations=min_iterations,
                          max_iterations=max_iterations, max_time_s=max_time,
                          target_ci_pct=ci, latency=latency, seed=seed, interval_s=interval)
    if loop not in ("asyncio", "uvloop"):
        raise UserError(f"--loop takes asyncio or uvloop, not {loop!r}")
    options = PythonOptions(file=file, pin=pin, profile=profile)
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
        results = execute(RunRequest(workload, with_probes(cases, probes), config,
                                     results_path(output, html, export, "python"),
                                     redacted_argv()),
                          console)
    finish(results, html, export)
