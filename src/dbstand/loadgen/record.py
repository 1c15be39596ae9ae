"""The results record of one `dbstand http` case, in dbstand's results schema.

Shaped like every other case record (`ops_per_s`, `latency_us`, `latency_hdr`,
`environment`) so `dbstand report` and `compare` read it as they read the rest;
the HTTP specifics (status codes, errors by kind, bytes, generator CPU) go
under `http`.
"""

from __future__ import annotations

from typing import Any

from dbstand.loadgen.result import LoadResult
from dbstand.results.environment import environment
from dbstand.results.schema import SCHEMA, now_iso


def engine_info() -> dict[str, str]:
    from dbstand import _loadgen

    return {"name": "dbstand-loadgen", "version": str(_loadgen.__version__)}


def http_case_record(result: LoadResult, run_id: str, index: int,
                     params: dict[str, Any]) -> dict[str, Any]:
    """A `case` record for one load run (status `failed` when nothing succeeded)."""
    latency = result.latency()
    http = result.to_dict()
    for key in ("histogram", "url", "mode"):
        http.pop(key, None)
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "type": "case",
        "run_id": run_id,
        "case_index": index,
        "workload": "http",
        "stack": "loadgen",
        "target": result.url,
        "target_kind": "http",
        "mode": result.mode,
        "op": params.get("method", "GET"),
        "params": params,
        "finished_at": now_iso(),
        "status": "ok" if result.successes else "failed",
        "ops_per_s": round(result.successes_per_s, 1),
        "requests_per_s": round(result.requests_per_s, 1),
        "bytes_per_s": round(result.bytes_per_s, 1),
        "latency_us": latency.summary_us(),
        "latency_mode": "all",
        "latency_samples": latency.count,
        "latency_hdr": result.histogram if latency.count else None,
        "duration_s": round(result.elapsed_s, 3),
        "http": http,
        "engine": engine_info(),
        "environment": environment({}, {"software": result.server} if result.server else {}),
    }
    if not result.successes:
        record["error"] = (f"no request succeeded: {result.failed} failed "
                           f"({result.errors.total} socket errors, {result.non_2xx} non-2xx)")
    return record
