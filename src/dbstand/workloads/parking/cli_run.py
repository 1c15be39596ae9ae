"""`dbstand run parking`: the ORM study's service, conformance first, then measured."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_ints, split_list
from dbstand.engine.config import EngineConfig
from dbstand.errors import UserError
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.http_load import SEED, STEADY, check_load
from dbstand.workloads.network_axis import APP_PARAM, app_paths, db_paths, with_paths
from dbstand.workloads.parking.options import (
    BASELINE,
    DEFAULT_BATCHES,
    DEFAULT_PASSES,
    ParkingOptions,
)
from dbstand.workloads.parking.workload import ParkingWorkload, build_cases, parking_stacks
from dbstand.workloads.run_common import (
    AppRtt,
    DbRtt,
    Export,
    Html,
    Output,
    Profile,
    finish,
    results_path,
)

#: counted batches' seconds before the cap flags a case unstable
MAX_CASE_S = 120.0


@contextlib.contextmanager
def parking_targets(text: str | None) -> Iterator[list[TargetURL]]:
    """The targets; none given: a SQLite file in a temporary folder, removed after."""
    if text:
        yield [parse_target_url(t) for t in split_list(text, "--target")]
        return
    with tempfile.TemporaryDirectory(prefix="dbstand-parking-") as tmp:
        yield [parse_target_url(f"sqlite:///{Path(tmp) / 'parking.db'}")]


def run_parking(
    target: Annotated[str | None, typer.Option(
        help="Target URL(s), comma-separated; default: a temporary SQLite file")] = None,
    stack: Annotated[str | None, typer.Option(
        help="Server stacks, comma-separated; default: every parking stack whose "
             "manifest runs on the target's kind")] = None,
    logging: Annotated[str, typer.Option(
        help="Service logging: on, off or on,off (the logging cost is shown when both "
             "ran)")] = "off",
    users: Annotated[str, typer.Option(
        help="Virtual users running whole passes at once, e.g. 1,8 (1: the study's "
             "sequential run)")] = "1",
    passes: Annotated[int, typer.Option(help="Suite passes per user in a batch")]
        = DEFAULT_PASSES,
    batches: Annotated[int, typer.Option(help="Counted batches (places re-seeded before "
                                              "each)")] = DEFAULT_BATCHES,
    warmup: Annotated[int, typer.Option(help="Uncounted warm-up batches (at least; more "
                                              "while batches still get faster)")] = 1,
    load: Annotated[str, typer.Option(
        help="steady: --batches at least, more until the 95% CI is within --ci (or "
             "--max-batches: unstable); seed: exactly --batches, as the study")] = STEADY,
    max_batches: Annotated[int, typer.Option(help="steady: counted batches at most")] = 30,
    ci: Annotated[float, typer.Option(help="A case whose 95% CI is wider than ±CI % of "
                                           "the mean is flagged unstable")] = 3.0,
    prefix: Annotated[str, typer.Option(help="Prefix of the tables dbstand owns")]
        = DEFAULT_PREFIX,
    keep: Annotated[bool, typer.Option(
        "--keep/--no-keep", help="Keep the service's tables after the run (dropped by "
                                 "default)")] = False,
    baseline: Annotated[str, typer.Option(
        help="The stack whose server CPU per pass every stack is compared with (the "
             "study's reference: CPython + SQLAlchemy)")] = BASELINE,
    db_rtt: DbRtt = None,
    app_rtt: AppRtt = None,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
) -> None:
    """parking: the five-scenario suite (68 calls a pass) against each server stack,
    conformance checked first; passes/s and client time per 20-pass batch, server and
    DB CPU per pass, each stack's server CPU against the baseline's, statements by
    kind, log volume, the effect of logging (both ways), per-function latency."""
    check_prefix(prefix)
    options = ParkingOptions(passes=passes, batches=batches, prefix=prefix, keep=keep,
                             baseline=baseline, profile=profile)
    options.check()
    check_load(load)
    config = EngineConfig(revs=passes, warmup=warmup, steady_warmup=load == STEADY,
                          min_iterations=batches, target_ci_pct=ci, latency="all",
                          max_iterations=batches if load == SEED else max(batches, max_batches),
                          max_time_s=MAX_CASE_S)
    if baseline not in parking_stacks():
        raise UserError(f"--baseline: unknown parking stack {baseline!r} "
                        f"(known: {', '.join(parking_stacks())})")
    stacks = split_list(stack, "--stack") or None
    with parking_targets(target) as targets:
        cases = build_cases(targets, stacks, split_list(logging, "--logging"),
                            split_ints(users, "--users"), options)
        cases = with_paths(cases, db_paths(db_rtt, targets))
        cases = with_paths(cases, app_paths(app_rtt), APP_PARAM)
        results = execute(RunRequest(ParkingWorkload(options), cases, config,
                                     results_path(output, html, export, "parking"),
                                     redacted_argv()),
                          console)
    finish(results, html, export)
