"""The results schema (documented in docs/results-schema.md).

A results file is JSON Lines: a `run` header, one `case` record per finished case
(appended as it ends), and a `run_end` footer whose `status` says whether the run
completed. A file without a footer comes from a run that crashed or is in progress.
"""

from __future__ import annotations

import time
from typing import Any, Literal, NotRequired, TypedDict

SCHEMA = "dbstand.result/1"


class RunHeader(TypedDict):
    """The first line of a results file."""

    schema: str
    type: Literal["run"]
    run_id: str
    workload: str
    started_at: str
    argv: list[str]


class CaseRecord(TypedDict):
    """The fields every case record has, whatever its workload (the workload's own
    fields follow them: docs/results-schema.md lists each kind's)."""

    schema: str
    type: Literal["case"]
    run_id: str
    case_index: int
    workload: str           # kv, batch, parking, webtech, docquery, http
    stack: str
    target: str             # password redacted
    target_kind: str
    mode: str
    op: str
    params: dict[str, Any]
    finished_at: str
    status: Literal["ok", "failed"]
    error: NotRequired[str]
    environment: dict[str, Any]


class RunFooter(TypedDict):
    """The last line: how the run ended."""

    schema: str
    type: Literal["run_end"]
    run_id: str
    status: Literal["complete", "complete-with-failures", "interrupted", "failed"]
    cases: int
    failed: int
    ended_at: str


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_header(run_id: str, argv: list[str], workload: str) -> RunHeader:
    return {"schema": SCHEMA, "type": "run", "run_id": run_id, "workload": workload,
            "started_at": now_iso(), "argv": argv}


def run_footer(run_id: str, status: str, cases: int, failed: int) -> RunFooter:
    return {"schema": SCHEMA, "type": "run_end", "run_id": run_id,
            "status": status,  # type: ignore[typeddict-item]  # one of its four, by callers
            "cases": cases, "failed": failed, "ended_at": now_iso()}
