"""`dbstand run kv`: the kv matrix (targets x stacks x protocols x modes x ops)."""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_list
from dbstand.distributed.cli import ClusterOption
from dbstand.engine.config import EngineConfig
from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT
from dbstand.modes.spec import ModeSpec, default_sweep, expand_modes, parse_mode
from dbstand.targets.prefix import DEFAULT_PREFIX
from dbstand.targets.url import TargetURL
from dbstand.workloads import Case
from dbstand.workloads.base import check_choice
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.kv.keys import DISTRIBUTIONS
from dbstand.workloads.kv.options import DEFAULT_ROWS, KvOptions
from dbstand.workloads.kv.workload import OPS, KvWorkload
from dbstand.workloads.network_axis import db_paths, with_paths
from dbstand.workloads.protocols import expand_protocols, with_probes
from dbstand.workloads.run_common import (
    DbRtt,
    Export,
    Html,
    Output,
    Profile,
    default_stacks,
    finish,
    results_path,
    run_targets,
)

LOOPS = ("asyncio", "uvloop")


def kv_cases(targets: list[TargetURL], stacks: list[str], ops: list[str], modes: list[str],
             revs: int, options: KvOptions, sweep: bool = False,
             loop: str | list[str] = "asyncio") -> list[Case]:
    """The matrix: targets x stacks x modes (x event loops, for asyncio stacks) x ops.
    With `sweep`, each stack gets the default concurrency sweep of its kind (asyncio
    levels for asyncio stacks, threads for synchronous ones) after the modes asked
    for. A synchronous stack runs no loop: it records the first one named."""
    loops = list(dict.fromkeys([loop] if isinstance(loop, str) else loop)) or ["asyncio"]
    check_choice(loops, LOOPS, "--loop")
    asked = expand_modes(modes)
    cases = []
    skipped: list[str] = []
    for target in targets:
        for stack in stacks:
            spec = get_stack(stack)  # unknown stack: one clear error before anything runs
            stack_modes = _modes_for(spec.name, spec.is_async, asked, skipped)
            if sweep:
                extra = default_sweep("asyncio" if spec.is_async else "threads")
                stack_modes += [m for m in extra if m not in stack_modes]
            for mode in stack_modes:
                for each_loop in loops if mode.is_async else loops[:1]:
                    for op in ops:
                        cases.append(Case("kv", stack, target, mode.name, op, {
                            **options.params(), "revs": revs, "loop": each_loop}))
    for note in dict.fromkeys(skipped):
        console.print(f"[yellow]note:[/] {note}")
    return cases


def _modes_for(stack: str, is_async: bool, asked: list[ModeSpec],
               skipped: list[str]) -> list[ModeSpec]:
    """The asked modes a stack can run: asyncio modes for asyncio stacks, the others for
    synchronous ones, so one matrix can hold both kinds (as the kv study's did). An
    asyncio stack asked only for `sync` runs `asyncio:1`, its one-at-a-time twin."""
    fits = [m for m in asked if m.is_async == is_async]
    for m in asked:
        if m not in fits:
            kind = "an asyncio" if is_async else "a synchronous"
            skipped.append(f"{stack} × {m.name} skipped: {stack} is {kind} stack")
    if fits:
        return fits
    if is_async and all(m.kind == "sync" for m in asked):
        skipped.pop()
        return [parse_mode("asyncio:1")]
    names = ", ".join(m.name for m in asked)
    fitting = "asyncio:N or processes:PxAsyncio:N" if is_async else \
        "sync, threads:N or processes:P"
    raise UserError(f"stack {stack!r} can run none of the modes {names} ({fitting} fit it)")


def run_kv(
    target: Annotated[str | None, typer.Option(
        help="Target URL(s), comma-separated; default: in-memory SQLite")] = None,
    stack: Annotated[str | None, typer.Option(
        help="Stack(s), comma-separated (see `dbstand list stacks`)")] = None,
    op: Annotated[str, typer.Option(help="Operations: " + ",".join(OPS))] = ",".join(OPS),
    mode: Annotated[str, typer.Option(
        help="Modes: sync, threads:N, asyncio:N, processes:P, processes:PxAsyncio:N "
             "(+shared: coroutines share one connection); asyncio:1,5,10 is a sweep")]
        = "sync",
    sweep: Annotated[bool, typer.Option(
        help="Also run each stack's default concurrency sweep and report the optimum")]
        = False,
    loop: Annotated[str, typer.Option(help="Event loop(s) for asyncio modes, comma-"
                                           "separated: asyncio, uvloop (one case per loop)")]
        = "asyncio",
    baseline: Annotated[str | None, typer.Option(
        help="Case the `vs baseline` column divides by, per operation: STACK[@MODE][@LOOP], "
             "e.g. 'tarantool[binary]@sync' (default: the first case of each operation)")]
        = None,
    pin: Annotated[bool, typer.Option(
        help="Place every case (sync and concurrent alike) by the placement table "
             "(needs 2+ CPUs; docs/placement.md)")]
        = True,
    pin_cpus: Annotated[str, typer.Option(
        help="Where --pin puts every case: same (the table: client and database on one "
             "CPU), separate (each on its own) or db-with-client")]
        = DEFAULT_PLACEMENT,
    protocol: Annotated[str | None, typer.Option(
        help="Protocols of stacks that offer several, e.g. binary,sql (tarantool), "
             "simple,prepared (pgbench), text,prepared (mysql-connector-python); "
             "default: all of each stack's")] = None,
    probes: Annotated[bool, typer.Option(
        help="Sample client/server CPU, server RSS and statements around the timed "
             "windows")] = True,
    revs: Annotated[int, typer.Option(help="Operations per iteration")] = 10_000,
    rows: Annotated[int, typer.Option(help="Rows in the table")] = DEFAULT_ROWS,
    warmup: Annotated[int, typer.Option(help="Uncounted warm-up iterations (at least)")] = 1,
    steady_warmup: Annotated[bool, typer.Option(
        help="Go on warming up (up to 8 more) while iterations still get faster by more "
             "than --ci")] = True,
    min_iterations: Annotated[int, typer.Option(help="Iterations before stopping")] = 5,
    max_iterations: Annotated[int, typer.Option(help="Cap; a case reaching it unstable "
                                                     "is flagged")] = 30,
    max_time: Annotated[float, typer.Option(help="Seconds per case before stopping")] = 60.0,
    ci: Annotated[float, typer.Option(help="Stop when the 95% CI is within ±CI % of the "
                                           "mean")] = 3.0,
    stop_rule: Annotated[str, typer.Option(help="ci (default) or study (the kv study's "
                                                "last-5-within-3% rule)")] = "ci",
    pause: Annotated[float, typer.Option(help="Seconds of pause between iterations")] = 0.0,
    interval: Annotated[float, typer.Option(
        help="Seconds per interval of the recorded time series (throughput and latency "
             "over time, warm-up included); 0: none")] = 1.0,
    latency: Annotated[str, typer.Option(help="Per-op latency: auto, all, off or every:K")]
        = "auto",
    distribution: Annotated[str, typer.Option(help="Keys: " + ", ".join(DISTRIBUTIONS))]
        = "uniform",
    prefix: Annotated[str, typer.Option(help="Prefix of the tables dbstand owns")]
        = DEFAULT_PREFIX,
    keep: Annotated[bool, typer.Option(help="Keep the table after each case")] = False,
    seed: Annotated[int, typer.Option(help="Random seed for keys")] = 42,
    db_rtt: DbRtt = None,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
    cluster: ClusterOption = None,
) -> None:
    """kv: single-key CRUD by random key, each operation its own benchmark."""
    config = EngineConfig(revs=revs, warmup=warmup, steady_warmup=steady_warmup,
                          min_iterations=min_iterations,
                          max_iterations=max_iterations, max_time_s=max_time,
                          target_ci_pct=ci, stop_rule=stop_rule, pause_s=pause,
                          latency=latency, seed=seed, interval_s=interval)
    options = KvOptions(rows=rows, distribution=distribution, prefix=prefix, keep=keep,
                        baseline=baseline, pin=pin, pin_cpus=pin_cpus, cluster=cluster,
                        profile=profile)
    options.check()
    if profile and not probes:
        raise UserError("--profile attaches to the trees the probes measure: drop --no-probes")
    ops = split_list(op, "--op")
    modes = split_list(mode, "--mode")
    with run_targets(target) as targets:
        stacks = split_list(stack, "--stack") or default_stacks(targets, "kv")
        cases = kv_cases(targets, stacks, ops, modes, revs, options, sweep,
                         split_list(loop, "--loop"))
        cases = with_probes(expand_protocols(cases, split_list(protocol, "--protocol")),
                            probes)
        cases = with_paths(cases, db_paths(db_rtt, targets))
        results = execute(RunRequest(KvWorkload(options), cases, config,
                                     results_path(output, html, export, "kv"),
                                     redacted_argv()),
                          console)
    finish(results, html, export)
