"""`dbstand run http --scenario FILE`: a user's HTTP scenario (docs/http-scenarios.md)
on the native engine, against a URL or a server stack dbstand starts, one case per
level of virtual users, recorded like `dbstand http` (the same records, exports and
compare)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from dbstand.console import console, err_console, split_list
from dbstand.errors import UserError
from dbstand.loadgen import DEFAULT_TIMEOUT_S, run_scenario
from dbstand.loadgen.record import DEFAULT_MAX_ERROR_RATE
from dbstand.loadgen.series import DEFAULT_INTERVAL_S
from dbstand.loadgen.summary import print_summary
from dbstand.results.store import check_output_path, read_results
from dbstand.workloads.http_run import (
    RunFailed,
    check_values,
    open_results,
    results_path,
    with_progress,
)
from dbstand.workloads.run_common import Export, output_option, parse_exports, write_exports
from dbstand.workloads.scenario.file import load_scenario


@contextlib.contextmanager
def _base_url(url: str | None, stack: str | None, target: str | None) -> Iterator[str]:
    """The URL to load: given, or that of a server stack started for the run."""
    if (url is None) == (stack is None):
        raise UserError("give --url URL or --stack NAME (a server stack dbstand starts)")
    if url is not None:
        if not url.startswith(("http://", "https://")):
            raise UserError(f"--url {url}: expected http://host:port")
        yield url.rstrip("/")
        return
    from dbstand.stacks.launcher import running_stack
    from dbstand.stacks.manifest import get_manifest
    from dbstand.targets.url import parse_target_url

    assert stack is not None
    manifest = get_manifest(stack)
    parsed = parse_target_url(target) if target else None
    with running_stack(manifest, target=parsed) as handle:
        yield handle.base_url


def run_http(
    scenario: Annotated[str, typer.Option(
        "--scenario", help="Scenario file (TOML: [[step]] tables, docs/http-scenarios.md)")],
    url: Annotated[str | None, typer.Option(help="Base URL to load (http://host:port)")]
        = None,
    stack: Annotated[str | None, typer.Option(
        help="A server stack to start and load instead of --url (see `dbstand stack "
             "list`; --stack-dir adds your own)")] = None,
    target: Annotated[str | None, typer.Option(
        help="Database URL handed to --stack (if it uses one)")] = None,
    users: Annotated[str, typer.Option(
        help="Virtual users (one connection each), comma-separated: a case per level")]
        = "1",
    iterations: Annotated[int | None, typer.Option(
        "--iterations", "-n", help="Scenario iterations in total per case")] = None,
    duration: Annotated[float | None, typer.Option(
        "--duration", "-d", help="Seconds per case (default 10 without -n)")] = None,
    rate: Annotated[float | None, typer.Option(
        "--rate", "-R", help="Open loop: scenario iterations started per second over all "
                             "virtual users, at fixed intended times (needs -d, not -n)")]
        = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", "-s", help="Seconds before a request times out (more than 0)")]
        = DEFAULT_TIMEOUT_S,
    max_error_rate: Annotated[float, typer.Option(
        help="Largest share of failed requests for a case to count as ok, 0-1")]
        = DEFAULT_MAX_ERROR_RATE,
    interval: Annotated[float, typer.Option(
        help="Seconds per interval of the recorded time series (0: none)")]
        = DEFAULT_INTERVAL_S,
    output: Annotated[Path | None, output_option("http")] = None,
    export: Export = None,
) -> None:
    """http: your own HTTP scenario (TOML) on the native engine, closed or open loop."""
    name, plan = load_scenario(scenario)
    levels = []
    for text in split_list(users, "--users"):
        if not text.isdigit() or int(text) < 1:
            raise UserError(f"--users takes positive whole numbers, not {text!r}")
        levels.append(int(text))
    if rate is not None and iterations is not None:
        raise UserError("--rate runs for -d seconds: drop -n")
    for level in levels:
        check_values(iterations, level, None, duration, rate, None, timeout,
                      max_error_rate, interval)
    if iterations is None and duration is None:
        duration = 10.0
    path = results_path(output)
    check_output_path(path)
    for _, export_path in parse_exports(export):
        check_output_path(export_path, "--export")
    from dbstand.loadgen.record import http_case_record
    from dbstand.results.schema import run_footer
    from dbstand.workloads.execution import new_run_id

    run_id = new_run_id()
    failed, done, status, errors = 0, 0, "failed", []
    with _base_url(url, stack, target) as base:
        writer = open_results(path, run_id)
        try:
            for index, level in enumerate(levels):
                result = with_progress(lambda lv=level: run_scenario(
                    base + "/", plan, lv, iterations=iterations, duration=duration,
                    timeout_s=timeout, interval_s=interval, rate=rate), duration)
                console.print(f"[bold]{name}[/] with {level} virtual user(s)")
                print_summary(result, console)
                params: dict[str, Any] = {
                    "scenario": name, "scenario_file": str(Path(scenario).resolve()),
                    "users": level, "connections": level, "iterations": iterations,
                    "loop": "open" if rate else "closed", "rate": rate,
                    "duration_s": duration, "timeout_s": timeout,
                    "steps": [s.name for s in plan.steps], "max_error_rate": max_error_rate}
                record = http_case_record(result, run_id, index, params, max_error_rate)
                mode = f"scenario:{level}" + (f"@{rate:g}/s" if rate else "")
                record.update(op=name, mode=mode, stack=stack or "url",
                              iterations_ok=result.iterations_ok,
                              iterations_failed=result.iterations_failed,
                              iterations_per_s=round(result.iterations_ok
                                                     / result.elapsed_s, 1)
                              if result.elapsed_s else None)
                if rate and result.elapsed_s:
                    reached = result.iterations_ok / min(result.elapsed_s, duration or 1e9)
                    record["iterations_rate_reached"] = round(reached / rate, 3)
                    if reached < 0.9 * rate:
                        record["unstable"] = True
                        record["note"] = (f"started {reached:,.1f} iterations/s of the asked "
                                          f"{rate:g}: not a run at the asked rate")
                writer.append(record)
                done += 1
                if record["status"] != "ok":
                    failed += 1
                    errors.append(str(record.get("error")))
            status = "complete-with-failures" if failed else "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            if not writer.broken:
                writer.append(run_footer(run_id, status, done, failed))
            writer.close()
            if not done:
                path.unlink(missing_ok=True)
    console.print(f"results: [bold]{path}[/]")
    write_exports(read_results(path), export)
    if failed:
        err_console.print(f"{failed} case(s) failed", highlight=False)
        raise RunFailed(errors[0])
