"""What `dbstand http` and `dbstand run http` share around one run of the HTTP engine:
its numbers checked by option name, the results file made before the load, a
progress line while the engine runs, and the exit of a recorded but failed run."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Any

from dbstand.console import err_console, redacted_argv
from dbstand.errors import UserError
from dbstand.loadgen import LoadResult
from dbstand.loadgen.series import DEFAULT_INTERVAL_S
from dbstand.results.store import ResultsWriter

MAX_CONNECTIONS = 100_000       # the engine's own bound
MAX_DURATION_S = 7 * 86_400     # the engine's own bound: a week
MAX_REQUESTS = 2**63 - 1
MIN_INTERVAL_S = 0.001          # the engine's narrowest time-series interval


class RunFailed(UserError):
    """The load ran and was recorded, but the case failed (too many errors): exit 1, as
    a run whose case failed."""

    exit_code = 1


def check_values(requests: int | None, concurrency: int, timelimit: float | None,
                 duration: float | None, rate: float | None, threads: int | None,
                 timeout: float, max_error_rate: float,
                 interval: float = DEFAULT_INTERVAL_S) -> None:
    """Every number within what it can mean, named by its option, before the engine
    sees it (whose own messages speak of Rust types, not of options)."""
    def number(value: float | None, option: str, what: str, low: float, high: float,
               low_open: bool = False) -> None:
        if value is None:
            return
        if not math.isfinite(value):
            raise UserError(f"{option}: {what} must be a finite number (got {value:g})")
        if value <= low if low_open else value < low:
            low_text = f"more than {low:g}" if low_open else f"at least {low:g}"
            raise UserError(f"{option}: {what} must be {low_text} (got {value:g})")
        if value > high:
            raise UserError(f"{option}: {what} must be at most {high:g} (got {value:g})")

    number(requests, "-n/--requests", "the number of requests", 1, MAX_REQUESTS)
    number(concurrency, "-c/--concurrency", "connections", 1, MAX_CONNECTIONS)
    number(threads, "--threads", "threads", 1, MAX_CONNECTIONS)
    number(timelimit, "-t/--timelimit", "the time limit in seconds", 0, MAX_DURATION_S,
           low_open=True)
    number(duration, "-d/--duration", "the duration in seconds", 0, MAX_DURATION_S,
           low_open=True)
    number(rate, "--rate", "the rate in requests/s", 0, 1e9, low_open=True)
    # a request with no time limit could hold a run without -d forever
    number(timeout, "-s/--timeout", "the timeout in seconds", 0, MAX_DURATION_S,
           low_open=True)
    number(max_error_rate, "--max-error-rate", "the share of failed requests", 0, 1)
    number(interval, "--interval", "the time series' interval in seconds (0: none)", 0,
           MAX_DURATION_S)
    if 0 < interval < MIN_INTERVAL_S:
        raise UserError(f"--interval: the time series' interval must be 0 (none) or at least "
                        f"{MIN_INTERVAL_S:g} s (got {interval:g})")


def with_progress(run: Any, duration: float | None) -> LoadResult:
    """Run the engine (GIL released) while a transient progress line ticks."""
    if not err_console.is_terminal:  # a progress line in a log file is noise
        return run()
    done = threading.Event()
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

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


def results_path(output: Path | None) -> Path:
    """Where the record goes; refused before the run, not after it."""
    from dbstand.workloads.execution import default_output

    path = output or default_output("http")
    if path.exists():
        raise UserError(f"results file {path} already exists: choose another --output")
    return path


def open_results(path: Path, run_id: str) -> ResultsWriter:
    """Create the results file (exclusively: a second run naming the same file is
    refused here, before it loads anything) with the run record in it."""
    from dbstand.results.schema import run_header

    writer = ResultsWriter(path)
    writer.open()
    writer.append(run_header(run_id, redacted_argv(), "http"))
    return writer
