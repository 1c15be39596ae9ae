"""Runs a list of cases: preflight, then each case measured and appended to the results.

Nothing is written before preflight has passed, so a user mistake leaves no results
file. Each finished case is appended at once; the end record says whether the run
completed, failed or was interrupted.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dbstand.cli.common import redact_text
from dbstand.engine.config import EngineConfig
from dbstand.errors import CaseFailed, OwnershipError, TargetError
from dbstand.results.schema import case_record, failed_record, run_footer, run_header
from dbstand.results.store import ResultsFile, ResultsWriter, read_results
from dbstand.workloads.base import Case, Workload


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


def execute(request: RunRequest, console: Console,
            on_case_done: Callable[[dict], None] | None = None) -> ResultsFile:
    """Run every case; return the results as written."""
    request.workload.preflight(request.cases)
    run_id = new_run_id()
    writer = ResultsWriter(request.output)
    writer.open()
    failed = 0
    status = "failed"
    engine = request.config.as_dict()
    try:
        writer.append(run_header(run_id, request.argv, request.workload.name))
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            overall = progress.add_task("cases", total=len(request.cases))
            for index, case in enumerate(request.cases):
                task = progress.add_task(f"  {case.label()}",
                                         total=request.config.max_iterations)

                def tick(done: int, total: int, task: int = task) -> None:
                    progress.update(task, completed=done, total=total)

                try:
                    outcome = request.workload.run_case(case, request.config, tick)
                    record = case_record(case, run_id, index, outcome, engine)
                except (CaseFailed, TargetError, OwnershipError) as exc:
                    failed += 1
                    record = failed_record(case, run_id, index, str(exc),
                                           request.workload.package_versions(case))
                except Exception as exc:  # a driver error mid-case: record it, go on
                    failed += 1
                    message = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                    record = failed_record(case, run_id, index, redact_text(message),
                                           request.workload.package_versions(case))
                if record["status"] == "failed":
                    console.print(f"[red]case failed[/]: {case.label()}: {record['error']}")
                writer.append(record)
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
            writer.append(run_footer(run_id, status, len(request.cases), failed))
            writer.close()
    return read_results(request.output)
