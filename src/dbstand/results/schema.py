"""The results schema (documented in docs/results-schema.md).

A results file is JSON Lines: a `run` header, one `case` record per finished case
(appended as it ends), and a `run_end` footer whose `status` says whether the run
completed. A file without a footer comes from a run that crashed or is in progress.
"""

from __future__ import annotations

import time
from typing import Any

from dbstand.engine.runner import CaseMeasurement
from dbstand.results.environment import environment
from dbstand.workloads.base import Case, CaseOutcome

SCHEMA = "dbstand.result/1"


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def base_record(case: Case, run_id: str, index: int) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "type": "case",
        "run_id": run_id,
        "case_index": index,
        "workload": case.workload,
        "stack": case.stack,
        "target": case.target.redacted(),
        "target_kind": case.target.kind,
        "mode": case.mode,
        "op": case.op,
        "params": {k: v for k, v in case.params.items() if k != "keep"},
        "finished_at": now_iso(),
    }


def measurement_fields(m: CaseMeasurement) -> dict[str, Any]:
    s = m.summary
    return {
        "ops_per_s": round(m.ops_per_s, 1),
        "ops_per_s_min": round(m.ops_per_s_min, 1),
        "ops_per_s_max": round(m.ops_per_s_max, 1),
        "ci95_pct": round(s.ci95_pct, 2),
        "iterations": s.n,
        "iterations_run": len(m.iterations_s),
        "iteration_s": {"mean": s.mean, "stdev": s.stdev, "min": s.min, "max": s.max,
                        "all": [round(x, 6) for x in m.iterations_s]},
        "unstable": m.unstable,
        "stop_reason": m.stop_reason,
        "stop_rule": m.stop_rule,
        "revs": m.revs,
        "warmup_iterations": m.warmup_iterations,
        "latency_us": m.latency.summary_us(),
        "latency_mode": m.latency_mode,
        "latency_every": m.latency_every,
        "latency_samples": m.latency.count,
        "latency_hdr": m.latency.encode() if m.latency.count else None,
        "harness_overhead_ns": m.harness_overhead_ns,
        "timer_overhead_ns": m.timer_overhead_ns,
        "duration_s": round(m.elapsed_s, 3),
    }


def case_record(case: Case, run_id: str, index: int, outcome: CaseOutcome,
                engine: dict[str, Any]) -> dict[str, Any]:
    """The record of a case that ran to the end."""
    record = base_record(case, run_id, index)
    record["status"] = "ok"
    metrics = dict(outcome.metrics)
    measurement = metrics.pop("measurement", None)
    if measurement is not None:
        record.update(measurement_fields(measurement))
    record.update(metrics)
    record["engine"] = engine
    record["environment"] = environment(outcome.packages, outcome.server)
    return record


def failed_record(case: Case, run_id: str, index: int, error: str,
                  packages: dict[str, str]) -> dict[str, Any]:
    """The record of a case that failed: kept, so a report shows the gap."""
    record = base_record(case, run_id, index)
    record["status"] = "failed"
    record["error"] = error
    record["environment"] = environment(packages, {})
    return record


def run_header(run_id: str, argv: list[str], workload: str) -> dict[str, Any]:
    return {"schema": SCHEMA, "type": "run", "run_id": run_id, "workload": workload,
            "started_at": now_iso(), "argv": argv}


def run_footer(run_id: str, status: str, cases: int, failed: int) -> dict[str, Any]:
    return {"schema": SCHEMA, "type": "run_end", "run_id": run_id, "status": status,
            "cases": cases, "failed": failed, "ended_at": now_iso()}
