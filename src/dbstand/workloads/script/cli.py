"""`dbstand run script`: pgbench-language scripts through every driver (targets x
stacks x protocols x modes)."""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.console import console, split_list
from dbstand.errors import UserError
from dbstand.modes.spec import ModeSpec, expand_modes
from dbstand.sql.ownership import DEFAULT_PREFIX
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.protocols import expand_protocols, with_probes
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
from dbstand.workloads.script.options import ScriptOptions


def parse_defines(items: list[str]) -> tuple[tuple[str, int | float | str], ...]:
    """`NAME=VALUE` pairs; numbers become numbers (as pgbench's -D values do)."""
    out: list[tuple[str, int | float | str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UserError(f"--define {item!r}: expected NAME=VALUE")
        number: int | float | str = value
        for conv in (int, float):
            try:
                number = conv(value)
                break
            except ValueError:
                continue
        out.append((name, number))
    return tuple(out)


def script_cases(targets: list[TargetURL], stacks: list[str], modes: list[str], op: str,
                 options: ScriptOptions, loop: str, revs: int) -> list[Case]:
    """Each stack in the asked modes it can run (asyncio modes for asyncio stacks, the
    others for synchronous ones; pgbench sync and threads:N as -c N)."""
    asked = expand_modes(modes)
    cases: list[Case] = []
    for target in targets:
        for stack in stacks:
            spec = get_stack(stack)
            fits = [m for m in asked if _fits(spec.name.split("[")[0], spec.is_async, m)]
            for m in asked:
                if m not in fits:
                    console.print(f"[yellow]note:[/] {stack} × {m.name} skipped "
                                  f"({_why(spec.is_async, spec.name)})")
            if not fits:
                raise UserError(f"stack {stack!r} can run none of the modes "
                                f"{', '.join(m.name for m in asked)}")
            for mode in fits:
                if mode.concurrency > revs:
                    raise UserError(f"--revs ({revs}) must be at least the concurrency of "
                                    f"{mode.name} ({mode.concurrency})")
                if spec.name.startswith("pgbench") and revs % mode.concurrency:
                    raise UserError(f"--revs ({revs}) must divide evenly over pgbench's "
                                    f"{mode.concurrency} clients (-t is per client)")
                cases.append(Case("script", stack, target, mode.name, op,
                                  {**options.params(), "loop": loop}))
    return cases


def _fits(base: str, is_async: bool, mode: ModeSpec) -> bool:
    if base == "pgbench":
        return mode.kind in ("sync", "threads")
    return mode.is_async == is_async


def _why(is_async: bool, name: str) -> str:
    if name.startswith("pgbench"):
        return "pgbench runs sync or threads:N"
    return "an asyncio stack" if is_async else "a synchronous stack"


@run_command()
def run_script(
    file: Annotated[list[str], typer.Option(
        "--file", "-f",
        help="Script file (pgbench's language) or built-in (tpcb-like, simple-update, "
             "select-only), with @WEIGHT for a weighted mix; repeatable")],
    target: Targets = None,
    stack: Annotated[str | None, typer.Option(
        help="Stack(s), comma-separated: drivers (psycopg, psycopg2, asyncpg, "
             "psycopg-async, pymysql, ...) and pgbench (the limit row)")] = None,
    mode: Modes = "sync",
    protocol: Annotated[str | None, typer.Option(
        help="pgbench's protocols: prepared,simple (default: both)")] = None,
    init: Annotated[bool, typer.Option(
        help="Create and fill pgbench's tables first (registered as dbstand's, dropped "
             "at the end unless --keep)")] = False,
    scale: Annotated[int | None, typer.Option(
        help="Scale of --init's tables and :scale (default: rows of pgbench_branches, "
             "else 1)")] = None,
    define: Annotated[list[str] | None, typer.Option(
        "--define", "-D", help="Variable NAME=VALUE every transaction starts with; "
                               "repeatable")] = None,
    keep: Annotated[bool, typer.Option(help="Keep the tables --init made")] = False,
    probes: Annotated[bool, typer.Option(
        help="Sample client/server CPU and statements per transaction")] = True,
    pin: Pin = True,
    revs: Annotated[int, typer.Option(help="Transactions per iteration")] = 1000,
    engine: EngineArgs = ENGINE_DEFAULTS,
    latency: Annotated[str, typer.Option(help="Per-transaction latency: auto, all, off "
                                              "or every:K")] = "auto",
    loop: Loop = "asyncio",
    prefix: Annotated[str, typer.Option(help="Prefix of dbstand's registry table")]
        = DEFAULT_PREFIX,
    seed: Annotated[int, typer.Option(help="Random seed of the scripts' draws")] = 42,
    *,
    shared: RunShared,
) -> None:
    """script: your own transactions (pgbench's script language) through every driver."""
    from dbstand.workloads.script.workload import ScriptWorkload

    config = engine.config(revs, latency, seed)
    check_loop(loop)
    options = ScriptOptions(files=tuple(file), init=init, scale=scale,
                            defines=parse_defines(define or []), keep=keep, prefix=prefix,
                            pin=pin, profile=shared.profile)
    options.check()
    workload = ScriptWorkload(options)  # a bad script fails here, before any results
    op = "+".join(file)
    with run_targets(target) as targets:
        stacks = split_list(stack, "--stack") or default_stacks(targets, "script")
        cases = script_cases(targets, stacks, split_list(mode, "--mode"), op, options,
                             loop, revs)
        cases = with_probes(expand_protocols(cases, split_list(protocol, "--protocol")),
                            probes)
        results = shared.execute(workload, cases, config, "script")
    shared.finish(results)
