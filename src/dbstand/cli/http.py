"""`dbstand http URL`: ab/wrk-style load test with the native engine.

ab's flags (-n, -c, -k, -t, -s, -H, -p, -T, -m) and wrk's (-d, --rate) mean
what they mean there, with one deliberate difference: keep-alive is on unless
--no-keepalive is given (dbstand's methodology), so -k is accepted and changes
nothing.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from dbstand.cli.common import console, err_console, redacted_argv
from dbstand.cli.run_common import Export, write_exports
from dbstand.errors import UserError
from dbstand.loadgen import DEFAULT_TIMEOUT_S, LoadResult, run_closed, run_open
from dbstand.loadgen.summary import print_summary
from dbstand.results.store import read_results

DEFAULT_DURATION_S = 10.0
AB_TIMELIMIT_REQUESTS = 50_000  # ab: "-t implies -n 50000"


def _headers(values: list[str] | None, content_type: str | None) -> list[tuple[str, str]]:
    out = []
    for v in values or []:
        name, sep, value = v.partition(":")
        if not sep or not name.strip():
            raise UserError(f"-H expects 'Name: value', got {v!r}")
        out.append((name.strip(), value.strip()))
    if content_type:
        out.append(("Content-Type", content_type))
    return out


def _plan(requests: int | None, timelimit: float | None, duration: float | None,
          rate: float | None) -> tuple[int | None, float | None]:
    """(requests, duration) from ab's and wrk's stop flags."""
    if timelimit is not None and duration is not None:
        raise UserError("give -t (ab's time limit) or -d (wrk's duration), not both")
    if timelimit is not None:
        return (requests or AB_TIMELIMIT_REQUESTS), timelimit
    if rate is not None:
        if duration is None and requests is None:
            duration = DEFAULT_DURATION_S
        if duration is None and requests is not None:
            if rate <= 0:
                raise UserError(f"--rate must be positive (got {rate:g})")
            duration = requests / rate
        return requests, duration
    if requests is None and duration is None:
        duration = DEFAULT_DURATION_S
    return requests, duration


def _with_progress(run: Any, duration: float | None) -> LoadResult:
    """Run the engine (GIL released) while a transient progress line ticks."""
    if not err_console.is_terminal:  # a progress line in a log file is noise
        return run()
    done = threading.Event()
    columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
    if duration:
        columns.append(BarColumn())
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("load", total=duration or None)
        start = time.monotonic()

        def tick() -> None:
            while not done.wait(0.2):
                progress.update(task, completed=min(time.monotonic() - start, duration or 0))

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            return run()
        finally:
            done.set()
            ticker.join()


def _results_path(output: Path | None) -> Path:
    """Where the record goes; refused before the run, not after it."""
    from dbstand.execution import default_output

    path = output or default_output("http")
    if path.exists():
        raise UserError(f"results file {path} already exists: choose another --output")
    return path


def _save(result: LoadResult, params: dict[str, Any], path: Path) -> Path:
    from dbstand.execution import new_run_id
    from dbstand.loadgen.record import http_case_record
    from dbstand.results.schema import run_footer, run_header
    from dbstand.results.store import ResultsWriter

    run_id = new_run_id()
    writer = ResultsWriter(path)
    writer.open()
    try:
        writer.append(run_header(run_id, redacted_argv(), "http"))
        record = http_case_record(result, run_id, 0, params)
        writer.append(record)
        failed = int(record["status"] != "ok")
        status = "complete-with-failures" if failed else "complete"
        writer.append(run_footer(run_id, status, 1, failed))
    finally:
        writer.close()
    return path


def http(
    url: Annotated[str, typer.Argument(help="http://host[:port]/path")],
    requests: Annotated[int | None, typer.Option(
        "-n", "--requests", help="Requests in total (ab -n)")] = None,
    concurrency: Annotated[int, typer.Option(
        "-c", "--concurrency", help="Connections at once (ab/wrk -c)")] = 1,
    keepalive: Annotated[bool, typer.Option(
        "--keepalive/--no-keepalive", "-k",
        help="Reuse connections (on by default; -k is accepted for ab)")] = True,
    timelimit: Annotated[float | None, typer.Option(
        "-t", "--timelimit", help="ab -t: at most this many seconds (implies -n 50000)")] = None,
    duration: Annotated[float | None, typer.Option(
        "-d", "--duration", help=f"wrk -d: run this many seconds (default {DEFAULT_DURATION_S:g} "
                                 "when neither -n nor -t is given)")] = None,
    rate: Annotated[float | None, typer.Option(
        "--rate", "-R", help="Open loop (wrk2 -R): requests/s in total; latency counts from "
                             "intended send times")] = None,
    threads: Annotated[int | None, typer.Option(
        "--threads", help="Generator threads (default: min(cores, connections))")] = None,
    timeout: Annotated[float, typer.Option(
        "-s", "--timeout", help="Seconds before a request times out (0: never)")]
        = DEFAULT_TIMEOUT_S,
    method: Annotated[str | None, typer.Option(
        "-m", "--method", help="HTTP method (default GET, or POST with -p)")] = None,
    header: Annotated[list[str] | None, typer.Option(
        "-H", "--header", help="Extra header 'Name: value' (repeatable)")] = None,
    post_file: Annotated[Path | None, typer.Option(
        "-p", "--post-file", help="File with the request body (implies POST)")] = None,
    content_type: Annotated[str | None, typer.Option(
        "-T", "--content-type", help="Content-Type of the body")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Results file (JSON Lines); default results/<time>-http.jsonl")]
        = None,
    export: Export = None,
) -> None:
    """Load-test one URL (ab/wrk style) and print an ab-like summary."""
    n, d = _plan(requests, timelimit, duration, rate)
    path = _results_path(output)
    body = b""
    if post_file is not None:
        try:
            body = post_file.read_bytes()
        except OSError as e:
            raise UserError(f"cannot read -p file {post_file}: {e.strerror}") from None
    verb = (method or ("POST" if post_file else "GET")).upper()
    hdrs = _headers(header, content_type)
    common: dict[str, Any] = dict(keepalive=keepalive, timeout_s=timeout, threads=threads,
                                  method=verb, headers=hdrs, body=body)
    if rate is not None:
        assert d is not None
        result = _with_progress(lambda: run_open(url, rate, d, concurrency, **common), d)
    else:
        result = _with_progress(
            lambda: run_closed(url, concurrency, requests=n, duration=d, **common), d)
    print_summary(result, console)
    params = {"method": verb, "connections": concurrency, "requests": n, "duration_s": d,
              "rate": rate, "keepalive": keepalive, "timeout_s": timeout,
              "threads": result.threads, "headers": [k for k, _ in hdrs],
              "body_bytes": len(body)}
    _save(result, params, path)
    console.print(f"results: [bold]{path}[/]")
    write_exports(read_results(path), export)
    if not result.successes:
        raise UserError(f"no request succeeded ({result.failed} failed: "
                        f"{result.errors.total} socket errors, {result.non_2xx} non-2xx)")
