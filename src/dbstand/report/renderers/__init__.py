"""One renderer per format, each drawing a report.model.Report; none knows a
workload. Adding a format is adding a module here and a line in FORMATS."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from dbstand.report.model import Report

#: format -> module with `render(report) -> str`
FORMATS = {"table": "terminal", "markdown": "markdown", "csv": "csv_text", "json": "json_text",
           "html": "html", "pyperf": "pyperf", "hdrlog": "hdrlog",
           "github-action-benchmark": "github_action_benchmark", "summary": "summary"}
#: what `--export FORMAT=PATH` writes (the terminal table is for the terminal)
EXPORT_FORMATS = tuple(name for name in FORMATS if name != "table")


def renderer(name: str) -> Callable[[Report], str]:
    from dbstand.errors import UserError

    if name not in FORMATS:
        raise UserError(f"unknown format {name!r} (known: {', '.join(FORMATS)})")
    module = importlib.import_module(f"dbstand.report.renderers.{FORMATS[name]}")
    render: Callable[[Report], str] = module.render
    return render
