"""The results record of one `dbstand http` case, in dbstand's results schema.

Shaped like every other case record (`ops_per_s`, `latency_us`, `latency_hdr`,
`environment`) so `dbstand report` and `compare` read it as they read the rest;
the HTTP specifics (status codes, errors by kind, bytes, generator CPU) go
under `http`; the run's time series (`--interval`) under `series`.

A case is `ok` only when its failed requests (non-2xx answers, failed checks, socket
errors and timeouts) are within `max_error_rate` of all requests (default 1%, as the
served workloads); otherwise it is `failed` with one line saying how many failed. An
open-loop run that reached less than `MIN_RATE_REACHED` of the rate it was asked for
measured another load than the one named: it is flagged `unstable` with a note.
"""

from __future__ import annotations

from typing import Any

from dbstand.loadgen.result import LoadResult
from dbstand.loadgen.series import series_record
from dbstand.results.environment import environment
from dbstand.results.schema import SCHEMA, now_iso

#: failed requests allowed in an ok case, as a share of all requests
DEFAULT_MAX_ERROR_RATE = 0.01
#: an open loop below this share of its asked rate did not run the load it names
MIN_RATE_REACHED = 0.9


def engine_info() -> dict[str, str]:
    from dbstand import _loadgen

    return {"name": "dbstand-loadgen", "version": str(_loadgen.__version__)}


def error_rate(result: LoadResult) -> float:
    """Failed requests (every cause) as a share of all requests; 1.0 when none ran."""
    return result.failed / result.requests if result.requests else 1.0


def failure(result: LoadResult, max_error_rate: float) -> str | None:
    """Why the case is not ok, in one line; None when it is."""
    detail = (f"{result.errors.total} socket errors, {result.non_2xx} non-2xx"
              + (f", {result.check_failed} failed checks" if result.check_failed else ""))
    if not result.successes:
        return f"no request succeeded ({result.failed} failed: {detail})"
    rate = error_rate(result)
    if rate > max_error_rate:
        return (f"{result.failed} of {result.requests} requests failed ({rate:.1%} > "
                f"{max_error_rate:.1%} allowed by --max-error-rate): {detail}")
    return None


def rate_note(result: LoadResult) -> tuple[float, str] | None:
    """Open loop: (share of the asked rate reached, a warning) when too little of it was
    reached; None otherwise."""
    if result.mode != "open" or not result.rate or result.elapsed_s <= 0:
        return None
    reached = result.requests_per_s / result.rate
    if reached >= MIN_RATE_REACHED:
        return None
    return reached, (f"reached {result.requests_per_s:,.0f} requests/s, {reached:.0%} of the "
                     f"asked {result.rate:,.0f}/s: the server or the generator could not "
                     "keep up, so this is not a run at the asked rate")


def http_case_record(result: LoadResult, run_id: str, index: int, params: dict[str, Any],
                     max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> dict[str, Any]:
    """A `case` record for one load run (`failed` when its errors exceed the threshold)."""
    latency = result.latency()
    http = result.to_dict()
    for key in ("histogram", "url", "mode", "series"):
        http.pop(key, None)
    why = failure(result, max_error_rate)
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
        "status": "failed" if why else "ok",
        "ops_per_s": round(result.successes_per_s, 1),
        "requests_per_s": round(result.requests_per_s, 1),
        "bytes_per_s": round(result.bytes_per_s, 1),
        "error_rate": round(error_rate(result), 5),
        "max_error_rate": max_error_rate,
        "latency_us": latency.summary_us(),
        "latency_mode": "all",
        "latency_samples": latency.count,
        "latency_hdr": result.histogram if latency.count else None,
        "duration_s": round(result.elapsed_s, 3),
        "http": http,
        "engine": engine_info(),
        "environment": environment({}, {"software": result.server} if result.server else {}),
    }
    series = series_record([result.series])
    if series is not None:
        record["series"] = series
    if why:
        record["error"] = why
    note = rate_note(result)
    if note is not None:
        record["rate_reached"] = round(note[0], 3)
        record["unstable"] = True
        record["note"] = note[1]
    elif result.mode == "open" and result.rate:
        record["rate_reached"] = round(result.requests_per_s / result.rate, 3)
    return record
