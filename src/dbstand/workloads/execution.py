"""Runs a list of cases: preflight, then each case measured and appended to the results.

Nothing is written before preflight has passed, so a user mistake leaves no results
file. Then, still before any measurement, the run takes the lock of each (database,
prefix) it uses (targets/run_lock.py: a second run on the same tables refuses) and
creates its results file with the run record in it (an output that cannot be written
fails here, not after the measurements). Each finished case is appended at once; the
end record says whether the run completed, failed or was interrupted. If the file
cannot take a record any more (a full disk), the run stops: the record is saved
elsewhere and the error says where, so no measurement is lost silently.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from dbstand import interrupts
from dbstand.console import redact_text
from dbstand.engine.config import EngineConfig
from dbstand.errors import CaseFailed, OwnershipError, TargetError
from dbstand.results.schema import run_footer, run_header
from dbstand.results.store import ResultsFile, ResultsWriteError, ResultsWriter, read_results
from dbstand.targets.prefix import DEFAULT_PREFIX
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, Workload
from dbstand.workloads.network_axis import add_network, case_on_path
from dbstand.workloads.records import case_record, failed_record
from dbstand.workloads.run_lock import run_locks


@dataclass
class RunRequest:
    workload: Workload
    cases: list[Case]
    config: EngineConfig
    output: Path
    argv: list[str]


def default_output(workload: str) -> Path:
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
    return Path("results") / f"{stamp}-{workload}.jsonl"


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def _lock_pairs(cases: list[Case]) -> list[tuple[TargetURL, str]]:
    """(target, prefix) of every case: what the run's locks cover."""
    return [(case.target, str(case.params.get("prefix", DEFAULT_PREFIX))) for case in cases
            if isinstance(case.target, TargetURL)]


def execute(request: RunRequest, console: Console,
            on_case_done: Callable[[dict], None] | None = None) -> ResultsFile:
    """Run every case; return the results as written."""
    request.workload.preflight(request.cases)
    if any(case.params.get("profile") for case in request.cases):
        from dbstand.profiles.tools import check_all

        check_all()  # a missing profiler: one line before anything is written
    with run_locks(_lock_pairs(request.cases)):
        return _execute(request, console, on_case_done)


def _execute(request: RunRequest, console: Console,
             on_case_done: Callable[[dict], None] | None) -> ResultsFile:
    run_id = new_run_id()
    writer = ResultsWriter(request.output)
    writer.open()
    writer.append(run_header(run_id, request.argv, request.workload.name))
    failed = 0
    status = "failed"
    engine = request.config.as_dict()
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            overall = progress.add_task("cases", total=len(request.cases))
            for index, case in enumerate(request.cases):
                interrupts.check()  # a Ctrl-C whose exception was lost (interrupts.py)
                task = progress.add_task(f"  {case.label()}",
                                         total=request.config.max_iterations)

                def tick(done: int, total: int, task: TaskID = task) -> None:
                    progress.update(task, completed=done, total=total)

                try:
                    def measure(case: Case = case, index: int = index,
                                tick: Callable[[int, int], None] = tick) -> dict:
                        with case_on_path(case) as (run, path):
                            outcome = request.workload.run_case(run, request.config, tick)
                        add_network(outcome, path)
                        return case_record(case, run_id, index, outcome, engine)

                    if case.params.get("profile"):
                        record = _profiled(request, case, index, measure, console)
                    else:
                        record = measure()
                except (CaseFailed, TargetError, OwnershipError) as exc:
                    failed += 1
                    message = " ".join(str(exc).split())  # one line, whatever the driver said
                    if isinstance(exc, CaseFailed):
                        message = _timeout_hint(message)
                    record = failed_record(case, run_id, index, redact_text(message),
                                           request.workload.package_versions(case))
                except Exception as exc:  # a driver error mid-case: record it, go on
                    failed += 1
                    message = _driver_error(exc)
                    record = failed_record(case, run_id, index, redact_text(message),
                                           request.workload.package_versions(case))
                if record["status"] == "failed":
                    console.print(f"[red]case failed[/]: {case.label()}: {record['error']}")
                _append(writer, record, run_id, index, len(request.cases))
                if on_case_done:
                    on_case_done(record)
                progress.remove_task(task)
                progress.advance(overall)
        status = "complete" if failed == 0 else "complete-with-failures"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        try:
            request.workload.close()
        finally:
            if not writer.broken:
                writer.append(run_footer(run_id, status, len(request.cases), failed))
            writer.close()
    return read_results(request.output)


def _profiled(request: RunRequest, case: Case, index: int, measure: Callable[[], dict],
              console: Console) -> dict:
    """A profiled case runs twice: unprofiled, for the overhead's denominator, then
    with its trees profiled; the record is the profiled run's, marked and carrying the
    ratio, the flame graphs' paths (relative to the results file) and their shares."""
    from dbstand.profiles.session import profiling

    plain = measure()
    base_dir = request.output.parent.resolve()
    folder = base_dir / f"{request.output.stem}.profiles" / f"case-{index}"
    with profiling(folder) as session:
        record = measure()
    profile = session.result()
    for tier in profile["tiers"].values():
        for key in ("folded", "svg"):
            if key in tier:
                tier[key] = str(Path(tier[key]).relative_to(base_dir))
    profile["directory"] = str(folder.relative_to(base_dir))
    base, mine = plain.get("ops_per_s"), record.get("ops_per_s")
    profile["unprofiled_ops_per_s"] = base
    profile["overhead_ratio"] = round(mine / base, 3) if base and mine else None
    record["profile"] = profile
    if profile["overhead_ratio"] is not None:
        console.print(f"profiled {case.label()}: {mine:,.1f} ops/s against {base:,.1f} "
                      f"unprofiled (x{profile['overhead_ratio']:.3f}); flame graphs in "
                      f"{folder}")
    return record


def _driver_error(exc: Exception) -> str:
    """One line for an error a driver raised mid-case."""
    message = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return _timeout_hint(message, isinstance(exc, TimeoutError))


def _timeout_hint(message: str, timed_out: bool = False) -> str:
    """A read that timed out names the limit that ended it (a stalled server fails the
    case, it does not hang the run)."""
    lower = message.lower()
    if timed_out or "timed out" in lower or "timeout" in lower:
        from dbstand.drivers import READ_TIMEOUT_ENV, read_timeout_s

        message += (f" (the database did not answer within {read_timeout_s()} s; "
                    f"{READ_TIMEOUT_ENV} sets that limit)")
    return message


def _append(writer: ResultsWriter, record: dict, run_id: str, index: int, total: int) -> None:
    """Append a case record; if the file cannot take it, save it elsewhere and stop the
    run with one line saying where it went (cases not run yet are not measured)."""
    try:
        writer.append(record)
    except ResultsWriteError as exc:
        where = writer.rescue([record], run_id)
        left = total - index - 1
        raise ResultsWriteError(f"{exc}; the record of case {index + 1} was saved to {where}"
                                + (f"; the run stopped with {left} case(s) not run"
                                   if left else "")) from None
