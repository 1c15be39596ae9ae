"""A finished case as a results record (results/schema.py's CaseRecord plus the
workload's own fields): built here, on the workload side, so that results/ stores and
reads records without importing any workload."""

from __future__ import annotations

from typing import Any

from dbstand.engine.runner import CaseMeasurement
from dbstand.results.environment import environment
from dbstand.results.schema import SCHEMA, now_iso
from dbstand.workloads.base import Case, CaseOutcome


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
    slowdown = m.slowdown
    return {
        "ops_per_s": round(m.ops_per_s, 1),
        "ops_per_s_min": round(m.ops_per_s_min, 1),
        "ops_per_s_max": round(m.ops_per_s_max, 1),
        "ci95_pct": round(s.ci95_pct, 2),
        "iterations": s.n,
        "iterations_run": len(m.iterations_s),
        "iteration_s": {"mean": s.mean, "stdev": s.stdev, "min": s.min, "max": s.max,
                        "all": [round(x, 6) for x in m.iterations_s],
                        **({"cpu": [round(x, 6) for x in m.iterations_cpu_s]}
                           if m.iterations_cpu_s is not None else {}),
                        **({"wait": [round(x, 6) for x in m.iterations_wait_s]}
                           if m.iterations_wait_s is not None else {})},
        **({"slowdown": slowdown.as_dict()} if slowdown is not None else {}),
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
        **({"series": m.series} if m.series is not None else {}),
        **({"machine_speed": m.machine_speed} if m.machine_speed is not None else {}),
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
