"""The results table: one row per case, the same columns in every format.

Every column names its unit and whether higher or lower is better
(methodology: "Honesty rules"). `relative` compares a case with the fastest case
of the same operation in the same run; ratios, never cross-machine absolutes.
"""

from __future__ import annotations

import json
from typing import Any


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _target_label(record: dict[str, Any]) -> str:
    target = str(record.get("target", ""))
    return target if len(target) <= 40 else target[:37] + "..."


_KIND_LABELS = {"select": "SELECT", "select_for_update": "SELECT FOR UPDATE",
                "insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "other": "other"}


def stack_label(record: dict[str, Any]) -> str:
    """The stack as measured: with the driver an ORM sat on and the protocol used
    (`sqlalchemy-orm+pymysql`, `tarantool[sql]`)."""
    stack = str(record.get("stack") or "")
    driver = record.get("driver")
    if driver and "+" not in stack:
        stack += f"+{driver}"
    protocol = (record.get("params") or {}).get("protocol")
    if protocol and "[" not in stack:
        stack += f"[{protocol}]"
    return stack


def _probe_cells(record: dict[str, Any]) -> dict[str, Any]:
    probes = record.get("probes") or {}
    kinds = probes.get("statements_per_op")
    total = round(sum(kinds.values()), 3) if kinds else None
    text = " + ".join(f"{n:g} {_KIND_LABELS.get(k, k)}" for k, n in kinds.items() if n) \
        if kinds else None
    return {"client_cpu_us": probes.get("client_cpu_us_per_op"),
            "server_cpu_us": probes.get("server_cpu_us_per_op"),
            "server_rss_mb": probes.get("server_peak_rss_mb"),
            "stmts_per_op": total, "stmt_kinds": text or (None if kinds is None else "0")}


def table_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Raw values per column (numbers stay numbers for CSV/JSON)."""
    best: dict[tuple[str, str], float] = {}
    for r in records:
        if r.get("status") == "ok" and r.get("ops_per_s"):
            key = (r["workload"], r["op"])
            best[key] = max(best.get(key, 0.0), r["ops_per_s"])
    rows = []
    for r in records:
        lat = r.get("latency_us") or {}
        notes = []
        if r.get("status") != "ok":
            notes.append("FAILED")
        if r.get("unstable"):
            notes.append("UNSTABLE")
        if r.get("limit"):
            notes.append("LIMIT")
        every = r.get("latency_every")
        timed = {0: "off", 1: "every op"}.get(every, f"1 in {every}") if every is not None \
            else "-"
        ops = r.get("ops_per_s")
        ref = best.get((r.get("workload", ""), r.get("op", "")))
        rows.append({
            "stack": stack_label(r),
            "target": _target_label(r),
            "mode": r.get("mode"),
            "op": r.get("op"),
            "ops_per_s": ops,
            "ci95_pct": r.get("ci95_pct"),
            "relative": round(ops / ref, 3) if ops and ref else None,
            "iterations": r.get("iterations"),
            "p50": lat.get("p50"),
            "p99": lat.get("p99"),
            "p999": lat.get("p999"),
            "max": lat.get("max"),
            "latency": timed,
            "harness_overhead_ns": r.get("harness_overhead_ns"),
            **_probe_cells(r),
            "note": " ".join(notes),
            "error": r.get("error"),
            "op_form": r.get("op_form"),
            "stop_reason": r.get("stop_reason"),
            "unstable": bool(r.get("unstable")),
            "failed": r.get("status") != "ok",
            "limit": bool(r.get("limit")),
        })
    return rows


def formatted(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key == "relative" and value is not None:
        return f"{value:.2f}x"
    if key == "ci95_pct" and value is not None:
        return f"±{value:.1f}"
    if key == "stmts_per_op" and value is not None:
        return f"{value:.2f}"
    return _fmt(value)


def _mode_family(mode: str) -> tuple[str, str]:
    """`asyncio:25` -> ("asyncio:", "25"); `processes:2xasyncio:25` -> ("processes:2xasyncio:",
    "25"); the family is what a sweep varies the last number of."""
    head, sep, last = mode.rpartition(":")
    shared = last.endswith("+shared")
    last = last.removesuffix("+shared")
    return (head + sep + ("+shared" if shared else ""), last) if last.isdigit() else (mode, "")


def sweeps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Concurrency sweeps found in a run: the curve and its optimum, per stack and op."""
    groups: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}
    for r in records:
        if r.get("status") != "ok" or not r.get("ops_per_s"):
            continue
        family, level = _mode_family(str(r.get("mode", "")))
        if not level:
            continue
        key = (r.get("workload"), r.get("stack"), r.get("target"), r.get("op"), family,
               json.dumps(r.get("params", {}), sort_keys=True))
        groups.setdefault(key, []).append((int(level), r))
    out = []
    for (workload, _stack, _target, op, family, _), points in groups.items():
        if len(points) < 2:
            continue
        points.sort(key=lambda p: p[0])
        best_level, best = max(points, key=lambda p: p[1]["ops_per_s"])
        out.append({"workload": workload, "stack": stack_label(best), "op": op,
                    "family": family,
                    "curve": [(lvl, r["ops_per_s"], bool(r.get("unstable")))
                              for lvl, r in points],
                    "optimum": f"{family}{best_level}", "optimum_ops_per_s": best["ops_per_s"]})
    return out


def sweep_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per sweep: ops/s at each level, the optimum starred."""
    lines = []
    for sw in sweeps(records):
        best = max(ops for _, ops, _ in sw["curve"])
        points = []
        for level, ops, unstable in sw["curve"]:
            mark = "*" if ops == best else ""
            flag = " (unstable)" if unstable else ""
            points.append(f"{level}: {ops:,.0f}{mark}{flag}")
        lines.append(f"sweep {sw['stack']} {sw['op']} {sw['family']}N, ops/s: "
                     f"{' · '.join(points)}; optimum {sw['optimum']}")
    return lines
