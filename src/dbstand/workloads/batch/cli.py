"""`dbstand run batch`: bulk insert/update/delete through every driver's batch APIs."""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_ints, split_list
from dbstand.engine.config import EngineConfig
from dbstand.errors import UserError
from dbstand.targets.kinds import get_kind
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix
from dbstand.targets.url import TargetURL
from dbstand.workloads.batch.api import OPS
from dbstand.workloads.batch.options import (
    DEFAULT_LARGE_REPEATS,
    DEFAULT_LARGE_ROWS,
    DEFAULT_PAGE_SIZE,
    BatchOptions,
)
from dbstand.workloads.batch.workload import DEFAULT_ROWS, BatchWorkload, build_cases
from dbstand.workloads.catalog import STACKS
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.network_axis import db_paths, with_paths
from dbstand.workloads.run_common import (
    DbRtt,
    Export,
    Html,
    Output,
    Profile,
    finish,
    results_path,
    run_targets,
)


def default_stacks(targets: list[TargetURL]) -> list[str]:
    stacks: list[str] = []
    for target in targets:
        for name in get_kind(target.kind).default_stacks.get("batch", ()):
            spec = STACKS.get(name)
            if spec is not None and spec.installed and name not in stacks:
                stacks.append(name)
    if not stacks:
        raise UserError("no installed batch stack for these targets: name one with --stack "
                        "(see `dbstand list apis`)")
    return stacks


def run_batch(
    target: Annotated[str | None, typer.Option(
        help="Target URL(s), comma-separated; default: in-memory SQLite")] = None,
    stack: Annotated[str | None, typer.Option(
        help="Stack(s), comma-separated; default: every installed driver of the target")]
        = None,
    api: Annotated[str | None, typer.Option(
        help="Batch APIs, comma-separated (see `dbstand list apis`); default: all")] = None,
    op: Annotated[str, typer.Option(help="Operations: " + ",".join(OPS))] = ",".join(OPS),
    rows: Annotated[str, typer.Option(help="Rows per batch, comma-separated")]
        = ",".join(map(str, DEFAULT_ROWS)),
    page_size: Annotated[int, typer.Option(
        help="Rows per page of the paged APIs (the study's page_size)")] = DEFAULT_PAGE_SIZE,
    large_rows: Annotated[int, typer.Option(
        help="From this many rows a case repeats a fixed number of times")]
        = DEFAULT_LARGE_ROWS,
    large_repeats: Annotated[int, typer.Option(
        help="Repetitions of a large case (at least 3)")] = DEFAULT_LARGE_REPEATS,
    limit: Annotated[bool, typer.Option(
        help="Also run the limit rows (server-side statement, psql \\copy, LOAD DATA)")]
        = True,
    analyze: Annotated[bool, typer.Option(
        help="ANALYZE the pre-filled table (untimed) before update/delete")] = True,
    key_predicate: Annotated[str, typer.Option(
        help="How update/delete find rows by key, comma-separated: index (correct "
             "binding, the default) and/or cast (the study's pitfall on purpose: the key "
             "compared through a cast no index serves; labelled in the tables)")] = "index",
    baseline: Annotated[str, typer.Option(
        help="The api every other one is compared with ([STACK:]API; default "
             "executemany, each stack's own when it has one)")] = "executemany",
    warmup: Annotated[int, typer.Option(help="Uncounted warm-up runs per case")] = 1,
    min_iterations: Annotated[int, typer.Option(
        help="Runs before the stop rule may stop a small case")] = 5,
    max_iterations: Annotated[int, typer.Option(
        help="Cap for a small case; reaching it unstable is flagged")] = 30,
    max_time: Annotated[float, typer.Option(help="Seconds per small case before stopping")]
        = 60.0,
    ci: Annotated[float, typer.Option(help="Stop when the 95% CI is within ±CI % of the "
                                           "mean")] = 3.0,
    stop_rule: Annotated[str, typer.Option(help="ci (default) or study")] = "ci",
    pause: Annotated[float, typer.Option(help="Seconds of pause between runs")] = 0.0,
    interval: Annotated[float, typer.Option(
        help="Seconds per interval of a time series of batches over time (a batch is "
             "one operation: coarse); 0 (default): none")] = 0.0,
    prefix: Annotated[str, typer.Option(help="Prefix of the tables dbstand owns")]
        = DEFAULT_PREFIX,
    keep: Annotated[bool, typer.Option(help="Keep the table after each case")] = False,
    db_rtt: DbRtt = None,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
) -> None:
    """batch: N rows inserted, updated or deleted in one batch per API, COMMIT included;
    ranked per operation, next to the native limit, with a scaling verdict."""
    config = EngineConfig(revs=1, warmup=warmup, min_iterations=min_iterations,
                          max_iterations=max_iterations, max_time_s=max_time,
                          target_ci_pct=ci, stop_rule=stop_rule, pause_s=pause,
                          latency="off", interval_s=interval)
    check_prefix(prefix)
    options = BatchOptions(page_size=page_size, large_rows=large_rows,
                           large_repeats=large_repeats, analyze=analyze, prefix=prefix,
                           keep=keep, baseline=baseline, profile=profile)
    ops = split_list(op, "--op")
    apis = split_list(api, "--api")
    row_counts = split_ints(rows, "--rows")
    workload = BatchWorkload(options)
    with run_targets(target) as targets:
        stacks = split_list(stack, "--stack") or default_stacks(targets)
        notes: list[str] = []
        cases = build_cases(targets, stacks, apis, ops, row_counts, options, limits=limit,
                            key_predicates=split_list(key_predicate, "--key-predicate"),
                            notes=notes)
        for note in notes:
            console.print(f"[yellow]note:[/] {note}")
        cases = with_paths(cases, db_paths(db_rtt, targets))
        results = execute(RunRequest(workload, cases, config,
                                     results_path(output, html, export, "batch"),
                                     redacted_argv()),
                          console)
    finish(results, html, export)

