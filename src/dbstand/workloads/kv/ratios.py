"""The ratios the kv study is about, computed within one run (specs/kv.md, "Output").

Per connector (a stack on one protocol): coroutines against the same connector one
operation at a time (asyncio:N / asyncio:1, the async connector's sync-like point),
threads against sync, several processes against one, uvloop against asyncio; per
connector and mode: each protocol against the stack's first one (sql / binary).
Each ratio carries an interval from its two cases' intervals, so a ratio whose
interval holds 1.0 is said to be within noise rather than a difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dbstand.workloads.kv.table import bimodal_of, loop_of, stack_label


@dataclass(frozen=True)
class Ratio:
    """`top` ops/s over `bottom` ops/s, with a combined 95% interval (in %)."""

    connector: str
    op: str
    kind: str            # coroutines | threads | processes | protocol | loop
    what: str            # "asyncio:25 / asyncio:1"
    value: float
    ci_pct: float
    shaky: bool          # either side unstable or bimodal

    @property
    def within_noise(self) -> bool:
        return abs(self.value - 1) * 100 <= self.ci_pct

    def as_dict(self) -> dict[str, Any]:
        return {"connector": self.connector, "op": self.op, "kind": self.kind,
                "what": self.what, "ratio": round(self.value, 3),
                "ci95_pct": round(self.ci_pct, 1), "within_noise": self.within_noise,
                "unstable": self.shaky}


def _ci(record: dict[str, Any]) -> float:
    ci = record.get("ci95_pct")
    return float(ci) if isinstance(ci, int | float) and math.isfinite(ci) else 100.0


def _shaky(record: dict[str, Any]) -> bool:
    return bool(record.get("unstable")) or bimodal_of(record) is not None


def ratio(connector: str, op: str, kind: str, top: dict[str, Any],
          bottom: dict[str, Any], what: str = "") -> Ratio:
    """The ratio of two cases; the interval combines both (in quadrature)."""
    value = float(top["ops_per_s"]) / float(bottom["ops_per_s"])
    return Ratio(connector, op, kind, what or f"{top.get('mode')} / {bottom.get('mode')}",
                 value, math.hypot(_ci(top), _ci(bottom)), _shaky(top) or _shaky(bottom))


def _level(mode: str, prefix: str) -> int | None:
    if not mode.startswith(prefix):
        return None
    rest = mode[len(prefix):]
    return int(rest) if rest.isdigit() else None


def _best(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The fastest stable case (the fastest of all when none is stable)."""
    stable = [r for r in records if not _shaky(r)]
    pool = stable or records
    return max(pool, key=lambda r: r["ops_per_s"]) if pool else None


def _protocol_order(stack: str) -> tuple[str, ...]:
    try:
        from dbstand.workloads.catalog import get_stack

        return get_stack(stack).protocols
    except Exception:  # a stack this version does not know: keep the run's order
        return ()


def kv_ratios(records: list[dict[str, Any]]) -> list[Ratio]:
    """Every ratio the run's cases allow, in a stable order."""
    ok = [r for r in records if r.get("status") == "ok" and r.get("ops_per_s")
          and r.get("workload", "kv") == "kv"]
    out: list[Ratio] = []
    by_conn: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in ok:
        by_conn.setdefault((stack_label(r), str(r.get("op")), str(r.get("target"))),
                           []).append(r)
    for (conn, op, _target), cases in by_conn.items():
        for loop in dict.fromkeys(loop_of(r) for r in cases if loop_of(r)):
            mine = [r for r in cases if loop_of(r) == loop]
            one = next((r for r in mine if r.get("mode") == "asyncio:1"), None)
            many = [r for r in mine if (_level(str(r.get("mode")), "asyncio:") or 0) > 1]
            best = _best(many)
            if one and best:
                on = "" if loop == "asyncio" else f" ({loop})"
                out.append(ratio(conn, op, "coroutines", best, one,
                                 f"{best['mode']} / asyncio:1{on}"))
            for r in mine:  # several processes against one with the same coroutines
                mode = str(r.get("mode"))
                if mode.startswith("processes:") and "xasyncio:" in mode:
                    single = next((x for x in mine if x.get("mode") ==
                                   "asyncio:" + mode.split("xasyncio:")[1]), None)
                    if single:
                        out.append(ratio(conn, op, "processes", r, single))
        sync = next((r for r in cases if r.get("mode") == "sync"), None)
        if sync:
            best = _best([r for r in cases if (_level(str(r.get("mode")), "threads:") or 0) > 1])
            if best:
                out.append(ratio(conn, op, "threads", best, sync))
            for r in cases:
                level = _level(str(r.get("mode")), "processes:")
                if level and level > 1:
                    out.append(ratio(conn, op, "processes", r, sync))
        plain = {str(r.get("mode")): r for r in cases if loop_of(r) == "asyncio"}
        for r in cases:
            if loop_of(r) == "uvloop" and str(r.get("mode")) in plain:
                out.append(ratio(conn, op, "loop", r, plain[str(r.get("mode"))],
                                 f"uvloop / asyncio at {r.get('mode')}"))
    out += _protocol_ratios(ok)
    return out


def _protocol_ratios(ok: list[dict[str, Any]]) -> list[Ratio]:
    """Per stack, op, mode and loop: each protocol over the stack's first one."""
    groups: dict[tuple[str, str, str, str, str], dict[str, dict[str, Any]]] = {}
    for r in ok:
        protocol = (r.get("params") or {}).get("protocol")
        if not protocol:
            continue
        key = (str(r.get("stack")), str(r.get("op")), str(r.get("mode")), loop_of(r),
               str(r.get("target")))
        groups.setdefault(key, {})[str(protocol)] = r
    out = []
    for (stack, op, mode, loop, _), by_protocol in groups.items():
        if len(by_protocol) < 2:
            continue
        order = [p for p in _protocol_order(stack) if p in by_protocol] or list(by_protocol)
        ref = order[0]
        on = f" on {loop}" if loop and loop != "asyncio" else ""
        for protocol, r in by_protocol.items():
            if protocol != ref:
                out.append(ratio(stack, op, "protocol", r, by_protocol[ref],
                                 f"{protocol} / {ref} at {mode}{on}"))
    return out
