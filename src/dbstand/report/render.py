"""From a results file to a rendered report: the workload that wrote the file builds
the report model (its `report` entry in workloads.ENTRIES), a renderer draws it."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from dbstand.report.model import Report
from dbstand.report.renderers import FORMATS, renderer
from dbstand.results.store import ResultsFile

__all__ = ["FORMATS", "build_report", "render", "render_terminal", "write_report"]


def _builder(workload: str) -> Callable[[list[dict[str, Any]], str], Report]:
    from dbstand.workloads import ENTRIES

    entry = ENTRIES.get(workload) or ENTRIES["kv"]
    module, _, attr = entry.report.partition(":")
    build: Callable[[list[dict[str, Any]], str], Report] = getattr(
        importlib.import_module(module), attr)
    return build


def build_report(results: ResultsFile) -> Report:
    header = results.header or {}
    workload = str(header.get("workload") or next(
        (c.get("workload") for c in results.cases), "kv"))
    title = f"dbstand {workload} run {header.get('run_id', '?')} ({results.status})"
    report = _builder(workload)(results.cases, title)
    report.header, report.status, report.complete = header, results.status, results.complete
    report.warnings = [*report.warnings, *results.warnings]
    report.environment = next((c.get("environment") for c in results.cases
                               if c.get("environment")), {})
    return report


def render(results: ResultsFile, format: str) -> str:
    return renderer(format)(build_report(results))


def render_terminal(results: ResultsFile, console: Console) -> None:
    from dbstand.report.renderers.terminal import print_report

    print_report(build_report(results), console)


def write_report(results: ResultsFile, path: Path, format: str = "html") -> None:
    """Write atomically: a report is either the old one or the whole new one."""
    text = render(results, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
