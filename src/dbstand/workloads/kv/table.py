"""The results table: one row per case, the same columns in every format.

Every column names its unit and whether higher or lower is better
(methodology: "Honesty rules"). `vs_baseline` compares a case with the baseline
case of the same operation in the same run (`--baseline`, else the run's first case
of that operation); ratios, never cross-machine absolutes. A bimodal case shows its
two modes with their shares instead of a mean.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from dbstand.network.rtt import DIRECT, path_of


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


def path_title(record: dict[str, Any]) -> str | None:
    """The case's network path ("direct", "proxy, 0 ms", "0.5 ms"); None off the axis."""
    label = (record.get("params") or {}).get("db_rtt")
    return None if label is None else path_of(str(label)).title


def _path_key(record: dict[str, Any]) -> tuple[str, ...]:
    return (str(record.get("target")), case_label(record), str(record.get("op")))


def _network_cells(record: dict[str, Any], direct_p50: dict[tuple[str, ...], float]
                   ) -> dict[str, Any]:
    """The path and what was measured on it: the RTT before the case, the round trips
    and their floor (round trips x RTT) per operation, the proxy's CPU, and the p50
    under the case's load over the same case's on the direct path."""
    net = record.get("network") or {}
    trips, rtt_ms = net.get("round_trips_per_op"), net.get("measured_rtt_ms")
    p50 = (record.get("latency_us") or {}).get("p50")
    base = direct_p50.get(_path_key(record))
    return {"path": path_title(record), "rtt_ms": rtt_ms, "round_trips": trips,
            "floor_us": round(trips * max(rtt_ms, 0.0) * 1000, 1)
            if trips is not None and rtt_ms is not None else None,
            "p50_added_us": round(p50 - base, 1)
            if p50 is not None and base is not None and net else None,
            "proxy_cpu_us": net.get("proxy_cpu_us_per_op")}


def loop_of(record: dict[str, Any]) -> str:
    """The event loop of an asyncio case ("" for a case that runs no loop)."""
    if "asyncio" not in str(record.get("mode", "")):
        return ""
    return str((record.get("params") or {}).get("loop") or "asyncio")


def case_label(record: dict[str, Any], with_loop: bool = True) -> str:
    """`asynctnt[sql] asyncio:25 uvloop`: what a ratio or a baseline names."""
    loop = loop_of(record) if with_loop else ""
    return " ".join(x for x in (stack_label(record), str(record.get("mode", "")), loop) if x)


@dataclass(frozen=True)
class BaselineSpec:
    """`--baseline STACK[@MODE][@LOOP]`: the case every other case of an op is divided
    by; parts left out match any (the first such case of the op in the run)."""

    stack: str
    mode: str = ""
    loop: str = ""

    @classmethod
    def parse(cls, text: str) -> BaselineSpec:
        parts = [p.strip() for p in text.split("@")]
        if not parts[0] or len(parts) > 3:
            raise ValueError(f"--baseline takes STACK[@MODE][@LOOP], e.g. "
                             f"'tarantool[binary]@sync', not {text!r}")
        return cls(*parts)

    def matches(self, record: dict[str, Any]) -> bool:
        stack_ok = self.stack in (stack_label(record), record.get("stack"))
        return stack_ok and self.mode in ("", record.get("mode")) and \
            self.loop in ("", loop_of(record))

    def __str__(self) -> str:
        return "@".join(x for x in (self.stack, self.mode, self.loop) if x)


def _ok(record: dict[str, Any]) -> bool:
    return record.get("status") == "ok" and bool(record.get("ops_per_s"))


def baselines(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (workload, op): the baseline case, as the run named it (the `baseline`
    field of its records), else the run's first measured case of that op."""
    named = next((r.get("baseline") for r in records if r.get("baseline")), None)
    spec = None
    if named:
        try:
            spec = BaselineSpec.parse(str(named))
        except ValueError:
            spec = None
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        key = (str(r.get("workload")), str(r.get("op")))
        if key in out or not _ok(r):
            continue
        if spec is None or spec.matches(r):
            out[key] = r
    return out


def baseline_text(records: list[dict[str, Any]]) -> str:
    """What the `vs baseline` column divides by, for the notes."""
    named = next((r.get("baseline") for r in records if r.get("baseline")), None)
    found = baselines(records)
    if not found:
        return f"vs baseline: no case matches --baseline {named}" if named else ""
    cases = list(dict.fromkeys(case_label(r) for r in found.values()))
    how = f"--baseline {named}" if named else "the run's first case of each operation"
    missing = sorted({str(r.get("op")) for r in records if _ok(r)} -
                     {op for _, op in found})
    text = f"vs baseline: ops/s over {', '.join(cases)} ({how})"
    if missing:
        text += f"; no baseline case for {', '.join(missing)}"
    return text


def bimodal_of(record: dict[str, Any]) -> dict[str, Any] | None:
    b = record.get("bimodal")
    return b if isinstance(b, dict) and len(b.get("modes") or []) == 2 else None


def bimodal_text(b: dict[str, Any]) -> str:
    fast, slow = b["modes"]
    return (f"{fast['ops_per_s']:,.0f} ({fast['share']:.0%}) | "
            f"{slow['ops_per_s']:,.0f} ({slow['share']:.0%})")


def table_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Raw values per column (numbers stay numbers for CSV/JSON)."""
    refs = baselines(records)
    direct_p50 = {_path_key(r): p50 for r in records
                  if (r.get("params") or {}).get("db_rtt") == DIRECT and _ok(r)
                  and (p50 := (r.get("latency_us") or {}).get("p50")) is not None}
    rows = []
    for r in records:
        lat = r.get("latency_us") or {}
        notes = []
        if r.get("status") != "ok":
            notes.append("FAILED")
        if r.get("unstable"):
            notes.append("UNSTABLE")
        if bimodal_of(r):
            notes.append("BIMODAL")
        if r.get("limit"):
            notes.append("LIMIT")
        every = r.get("latency_every")
        timed = {0: "off", 1: "every op"}.get(every, f"1 in {every}") if every is not None \
            else "-"
        ops = r.get("ops_per_s")
        base = refs.get((str(r.get("workload")), str(r.get("op"))))
        ref = base.get("ops_per_s") if base else None
        rows.append({
            "stack": stack_label(r),
            "target": _target_label(r),
            "mode": r.get("mode"),
            "loop": loop_of(r),
            "op": r.get("op"),
            "ops_per_s": ops,
            "ci95_pct": r.get("ci95_pct"),
            "vs_baseline": round(ops / ref, 3) if ops and ref else None,
            "bimodal": bimodal_of(r),
            "pinned": bool((((r.get("environment") or {}).get("server") or {})
                            .get("cpu_pinning") or {}).get("enabled")),
            "iterations": r.get("iterations"),
            "p50": lat.get("p50"),
            "p99": lat.get("p99"),
            "p999": lat.get("p999"),
            "max": lat.get("max"),
            "latency": timed,
            "harness_overhead_ns": r.get("harness_overhead_ns"),
            **_probe_cells(r),
            **_network_cells(r, direct_p50),
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
    if key == "ops_per_s" and row.get("bimodal"):
        return "BIMODAL " + bimodal_text(row["bimodal"])
    if key == "vs_baseline" and value is not None:
        return f"{value:.2f}x"
    if key == "ci95_pct" and value is not None:
        return f"±{value:.1f}"
    if key in ("stmts_per_op", "round_trips") and value is not None:
        return f"{value:.2f}"
    if key == "rtt_ms" and value is not None:
        return f"{value:.3f}"
    return _fmt(value)


def _mode_family(mode: str) -> tuple[str, str]:
    """`asyncio:25` -> ("asyncio:", "25"); `processes:2xasyncio:25` -> ("processes:2xasyncio:",
    "25"); the family is what a sweep varies the last number of."""
    head, sep, last = mode.rpartition(":")
    shared = last.endswith("+shared")
    last = last.removesuffix("+shared")
    return (head + sep + ("+shared" if shared else ""), last) if last.isdigit() else (mode, "")


@dataclass(frozen=True)
class Point:
    """One level of a sweep: ops/s with its interval; `shaky` when unstable or bimodal."""

    level: int
    ops: float
    ci_pct: float
    shaky: bool

    @property
    def low(self) -> float:
        return self.ops * (1 - self.ci_pct / 100)

    @property
    def high(self) -> float:
        return self.ops * (1 + self.ci_pct / 100)


def _point(level: int, r: dict[str, Any]) -> Point:
    ci = r.get("ci95_pct")
    ci_pct = float(ci) if isinstance(ci, int | float) and math.isfinite(ci) else 100.0
    return Point(level, float(r["ops_per_s"]), ci_pct,
                 bool(r.get("unstable")) or bimodal_of(r) is not None)


def judge_sweep(points: list[Point], family: str) -> dict[str, Any]:
    """The optimum, only where it beats both neighbours beyond their intervals (its
    low end above their high ends); else the plateau around the best stable point:
    the contiguous levels whose intervals reach the best's. An unstable or bimodal
    point is never the optimum."""
    stable = [p for p in points if not p.shaky]
    if not stable:
        return {"optimum": None, "plateau": None, "verdict": "no optimum: every point is "
                "unstable"}
    best = max(stable, key=lambda p: p.ops)
    i = points.index(best)
    neighbours = points[max(0, i - 1):i] + points[i + 1:i + 2]
    if all(best.low > n.high for n in neighbours):
        return {"optimum": f"{family}{best.level}", "plateau": None,
                "verdict": f"optimum {family}{best.level}"}
    lo = hi = i
    while lo > 0 and points[lo - 1].high >= best.low:
        lo -= 1
    while hi < len(points) - 1 and points[hi + 1].high >= best.low:
        hi += 1
    members = points[lo:hi + 1]
    spread = max(abs(p.ops - best.ops) / best.ops * 100 for p in members)
    # a neighbour that does not lie below the best's interval joins it: lo < hi here
    levels = f"{family}{points[lo].level}-{points[hi].level}"
    return {"optimum": None, "plateau": levels,
            "verdict": f"plateau {levels} within {max(spread, 0.5):.0f}% (no optimum "
                       "beyond the neighbours' intervals)"}


def sweeps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Concurrency sweeps found in a run: the curve and its verdict, per stack and op."""
    groups: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}
    for r in records:
        if not _ok(r):
            continue
        family, level = _mode_family(str(r.get("mode", "")))
        if not level:
            continue
        key = (r.get("workload"), r.get("stack"), r.get("target"), r.get("op"), family,
               json.dumps(r.get("params", {}), sort_keys=True))
        groups.setdefault(key, []).append((int(level), r))
    out = []
    for (workload, _stack, _target, op, family, _), members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda p: p[0])
        points = [_point(level, r) for level, r in members]
        first = members[0][1]
        verdict = judge_sweep(points, family)
        out.append({"workload": workload, "stack": stack_label(first), "op": op,
                    "family": family, "loop": loop_of(first),
                    "curve": [(p.level, p.ops, p.shaky) for p in points],
                    "points": points, **verdict})
    return out


def sweep_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per sweep: ops/s at each level (±CI), the best stable point starred,
    and the verdict: a named optimum, a plateau, or none."""
    lines = []
    for sw in sweeps(records):
        stable = [p for p in sw["points"] if not p.shaky]
        top = max((p.ops for p in stable), default=None)
        parts = []
        for p in sw["points"]:
            mark = "*" if p.ops == top else ""
            flag = " (unstable)" if p.shaky else ""
            parts.append(f"{p.level}: {p.ops:,.0f}{mark} ±{p.ci_pct:.0f}%{flag}")
        loop = f" on {sw['loop']}" if sw["loop"] else ""
        lines.append(f"sweep {sw['stack']} {sw['op']} {sw['family']}N{loop}, ops/s: "
                     f"{' · '.join(parts)}; {sw['verdict']}")
    return lines
