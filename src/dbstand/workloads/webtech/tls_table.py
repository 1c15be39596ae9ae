"""The `--tls off,on` table: each stack's cost of TLS, from the pair of cases that
differ only in it (docs/tls.md).

Per request, kept alive: the stack's CPU without TLS, and with it the stack's plus the
terminator's (nginx in front); their difference is what serving the page over TLS
costs. Per new connection: the terminator's CPU per request of a run that opens a
connection for every request, less its kept-alive figure, is the handshake's CPU (full,
then resumed); the set-up time is the engine's (TCP connect and handshake).
"""

from __future__ import annotations

from typing import Any

from dbstand.report.model import Column, Section, Table, fmt
from dbstand.workloads.webtech.options import TLS_PARAM

CAPTION = ("TLS cost per stack: the same test and clients with TLS off (the generator "
           "speaks HTTP to the stack) and on (TLS 1.3 to one managed nginx in front of "
           "the stack, the same for every stack). CPU µs/req ↓: user+sys CPU per request "
           "of the stack's tree, and with TLS of the stack's plus the terminator's; TLS "
           "µs/req: their difference (the terminator's proxying included, as in any TLS "
           "front). Handshake: a run with a new connection per request, full handshakes "
           "(no resumption), then resumed ones; its CPU is the terminator's per request "
           "there minus its kept-alive figure; set-up p50 is TCP connect plus handshake.")


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    params = {k: v for k, v in (r.get("params") or {}).items() if k != TLS_PARAM}
    return (r.get("stack"), r.get("op"), r.get("mode"), repr(sorted(params.items())))


def pairs(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(off, on) records of the same case, both measured, in run order."""
    by: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for r in records:
        setting = (r.get("params") or {}).get(TLS_PARAM)
        if r.get("status") == "ok" and setting in ("off", "on"):
            by.setdefault(_key(r), {})[setting] = r
    return [(two["off"], two["on"]) for two in by.values() if len(two) == 2]


def cost(off: dict[str, Any], on: dict[str, Any]) -> dict[str, Any]:
    """The figures of one pair (None where a probe gave none)."""
    plain = off.get("app_cpu_us_per_req")
    stack, front = on.get("app_cpu_us_per_req"), on.get("proxy_cpu_us_per_req")
    total = stack + front if stack is not None and front is not None else None
    extra = total - plain if total is not None and plain is not None else None
    shake = on.get("handshake") or {}

    def handshake_cpu(kind: str) -> float | None:
        per = (shake.get(kind) or {}).get("proxy_cpu_us_per_req")
        return per - front if per is not None and front is not None else None

    full = shake.get("full") or {}
    return {"stack": on.get("stack"), "test": on.get("op"),
            "clients": (on.get("params") or {}).get("clients"),
            "ops_off": off.get("ops_per_s"), "ops_on": on.get("ops_per_s"),
            "cpu_off": plain, "cpu_on": total, "stack_cpu_on": stack, "front_cpu": front,
            "tls_cpu": extra, "tls_pct": 100 * extra / plain if extra is not None and plain
            else None,
            "full_per_s": full.get("per_s"), "full_setup_us": (full.get("setup_us") or {})
            .get("p50"), "full_cpu": handshake_cpu("full"),
            "resumed_cpu": handshake_cpu("resumed")}


def section(records: list[dict[str, Any]]) -> Section | None:
    """The table, or None when the run has no pair."""
    found = [cost(off, on) for off, on in pairs(records)]
    if not found:
        return None
    columns = [Column("stack", "stack", names_row=True), Column("test", "test"),
               Column("clients", "clients", True),
               Column("ops", "ops/s ↑ off → on", True),
               Column("cpu_off", "CPU µs/req ↓ off", True),
               Column("cpu_on", "on (stack + TLS front)", True),
               Column("tls", "TLS µs/req ↓", True),
               Column("full", "full handshakes/s ↑", True),
               Column("setup", "set-up p50 µs ↓", True),
               Column("full_cpu", "CPU µs/full handshake ↓", True),
               Column("resumed_cpu", "CPU µs/resumed ↓", True)]
    rows = []
    for c in found:
        pct = f" (+{c['tls_pct']:.0f}%)" if c["tls_pct"] is not None else ""
        rows.append({
            "stack": c["stack"], "test": c["test"], "clients": fmt(c["clients"]),
            "ops": f"{fmt(c['ops_off'], 0)} → {fmt(c['ops_on'], 0)}",
            "cpu_off": fmt(c["cpu_off"], 1),
            "cpu_on": f"{fmt(c['cpu_on'], 1)} ({fmt(c['stack_cpu_on'], 1)} + "
                      f"{fmt(c['front_cpu'], 1)})",
            "tls": fmt(c["tls_cpu"], 1) + pct, "full": fmt(c["full_per_s"], 0),
            "setup": fmt(c["full_setup_us"], 0), "full_cpu": fmt(c["full_cpu"], 0),
            "resumed_cpu": fmt(c["resumed_cpu"], 0)})
    table = Table("webtech: the cost of TLS per stack (TLS off against on)", columns, rows,
                  caption=CAPTION, anchor="table-tls")
    return Section("TLS", [table])


def data(record: dict[str, Any]) -> dict[str, Any]:
    """A case's TLS columns of the report's data rows."""
    shake = record.get("handshake") or {}
    return {"tls": (record.get("params") or {}).get(TLS_PARAM),
            "proxy_cpu_us_per_req": record.get("proxy_cpu_us_per_req"),
            "full_handshakes_per_s": (shake.get("full") or {}).get("per_s"),
            "full_handshake_proxy_cpu_us_per_req":
                (shake.get("full") or {}).get("proxy_cpu_us_per_req"),
            "resumed_handshake_proxy_cpu_us_per_req":
                (shake.get("resumed") or {}).get("proxy_cpu_us_per_req")}


DATA_COLUMNS = list(data({}))
