"""Where a case's CPU went: per operation, each tier's CPU and its share of the machine's
capacity during the measured window (docs/breakdown.md).

Read from any workload's records, so every report gets it the same way: in-process
cases (kv, batch) carry `probes` (client and database CPU over the counted windows);
served cases (webtech, docquery) carry the app stack's and the database's CPU per
request and the load generator's CPU; parking's carry the client's, the app's and the
database's CPU per suite pass (its operation); a proxy dbstand started adds
`proxy_cpu_us_per_req`; a profiled case adds its profilers' CPU, reported apart.
"""

from __future__ import annotations

import json
from typing import Any

from dbstand.report.model import (
    Column,
    Link,
    Section,
    StackedBar,
    StackedBarChart,
    Table,
    case_anchor,
)

#: the stacking order: who sends, who serves, who stores, what sits between, who watches
TIERS = ("client", "generator", "app", "proxy", "database", "profiler")
#: one block character per tier in the terminal, so the bar reads without colour
BLOCKS = {"client": "█", "generator": "█", "app": "▓", "proxy": "▚", "database": "▒",
          "profiler": "░"}
BAR_WIDTH = 25          # 4% of the machine a character


def _cores(record: dict[str, Any]) -> int:
    env = record.get("environment") or {}
    probes = record.get("probes") or {}
    return int(probes.get("cores") or env.get("cpu_logical") or 1)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def tiers_of(record: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """tier -> (CPU µs per operation, share of the machine's capacity 0..1)."""
    cores = _cores(record)
    out: dict[str, tuple[float, float]] = {}
    probes = record.get("probes") or {}
    window = _num(probes.get("window_s"))
    ops = _num(probes.get("ops"))
    if window and ops:   # in-process: CPU seconds over the counted windows
        for tier, key in (("client", "client_cpu_s"), ("database", "server_cpu_s")):
            cpu = _num(probes.get(key))
            if cpu is not None:
                out[tier] = (cpu / ops * 1e6, cpu / window / cores)
    rate = _num(record.get("ops_per_s"))
    successes = _num(record.get("successes"))
    if rate and "app_cpu_us_per_req" in record:   # served: per request x requests/s
        window = successes / rate if successes else None
        generator = _num(record.get("generator_cpu_s"))
        per_req = {"generator": generator / successes * 1e6 if generator is not None
                   and successes else None,
                   "app": _num(record.get("app_cpu_us_per_req")),
                   "proxy": _num(record.get("proxy_cpu_us_per_req")),
                   "database": _num(record.get("db_cpu_us_per_req"))}
        for tier, us in per_req.items():
            if us is not None:
                out[tier] = (us, us * rate / 1e6 / cores)
    passes = _num(record.get("passes_per_s"))
    if passes and "app_cpu_ms_per_pass" in record:   # parking: per suite pass
        rate = passes
        for tier, key in (("client", "client_cpu_ms_per_pass"),
                          ("app", "app_cpu_ms_per_pass"), ("database", "db_cpu_ms_per_pass")):
            ms = _num(record.get(key))
            if ms is not None:
                out[tier] = (ms * 1e3, ms / 1e3 * passes / cores)
    profiler = _profiler_share(record)
    if profiler is not None and rate:
        out["profiler"] = (profiler * cores / rate * 1e6, profiler)
        for tier, inside in _profiler_inside(record).items():
            if tier in out:   # JFR's threads (older records): in the JVM's tier, moved here
                us, share = out[tier]
                out[tier] = (max(us - inside * cores / rate * 1e6, 0.0),
                             max(share - inside, 0.0))
    return out


def _shares(record: dict[str, Any], key: str) -> dict[str, float]:
    """Per profiled tier, `key`'s CPU seconds over the time its profilers ran (they run
    a little beyond the windows), as a share of the machine."""
    tiers = (record.get("profile") or {}).get("tiers") or {}
    return {name: cpu / wall / _cores(record) for name, t in tiers.items()
            if (cpu := _num(t.get(key))) is not None and (wall := _num(t.get("profiled_s")))}


def _profiler_share(record: dict[str, Any]) -> float | None:
    """The profilers' CPU as a share of the machine: their own processes (and, in
    records written while JVMs were profiled by JFR, its threads inside the JVM)."""
    shares = _shares(record, "profiler_cpu_s")
    return sum(shares.values()) if shares else None


def _profiler_inside(record: dict[str, Any]) -> dict[str, float]:
    """Breakdown tier -> the share of it that was a profiler's threads inside its
    processes (JFR in a JVM, in records written before JVMs were profiled by perf: the
    app tier), so the profiler tier has it and that tier does not; a profiling tier is
    named as the breakdown's tier it samples."""
    return {name: share for name, share in _shares(record, "profiler_cpu_inside_s").items()
            if share}


def bar_text(parts: list[tuple[str, float]], width: int = BAR_WIDTH) -> str:
    """Unicode blocks, one character per 1/width of the machine, a tier's own block."""
    out, used = "", 0.0
    for tier, share in parts:
        share = max(0.0, min(share, 1.0 - used))   # probes' jitter never overflows the bar
        cells = round((used + share) * width) - round(used * width)
        out += BLOCKS.get(tier, "#") * cells
        used += share
    return out.ljust(width, "·")


def _label(record: dict[str, Any]) -> str:
    rows = record.get("rows") if isinstance(record.get("api"), str) else None  # batch
    bits = [str(record.get("stack") or "?"), str(record.get("api") or ""),
            str(record.get("op") or ""), f"{rows:,} rows" if isinstance(rows, int) else "",
            str(record.get("mode") or "")]
    tls = (record.get("params") or {}).get("tls") == "on"  # webtech's --tls axis
    return (" ".join(b for b in bits if b) + (" [TLS]" if tls else "")
            + (" [profiled]" if record.get("profile") else ""))


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


#: what makes two cases the same work done by different stacks (with equal params):
#: their client tiers compare (kv's psycopg against SQLAlchemy's ORM on one op and mode)
SAME_WORK = ("workload", "target", "op", "api", "rows", "mode", "test", "clients")


def _client_extra(records: list[dict[str, Any]]) -> dict[int, float]:
    """Per record (by position), its client CPU per operation over the least of the
    cases doing the same work with another stack: what the stack adds on the client
    (an ORM's own work over its driver's). Only where two stacks or more did it."""
    groups: dict[tuple[Any, ...], list[tuple[int, str, float]]] = {}
    for index, record in enumerate(records):
        client = tiers_of(record).get("client") if record.get("status") == "ok" else None
        if client is not None:
            key = (*(str(record.get(k)) for k in SAME_WORK),
                   json.dumps(record.get("params"), sort_keys=True, default=str))
            groups.setdefault(key, []).append((index, str(record.get("stack")), client[0]))
    out: dict[int, float] = {}
    for cases in groups.values():
        if len({stack for _, stack, _ in cases}) > 1:
            least = min(us for _, _, us in cases)
            out.update({index: us - least for index, _, us in cases})
    return out


def section(records: list[dict[str, Any]]) -> Section | None:
    """The breakdown table and its stacked bars, and the flame graphs of profiled cases."""
    rows, anchors, links, bars = [], [], [], []
    extra = _client_extra(records)
    for index, record in enumerate(records):
        if record.get("status") != "ok":
            continue
        tiers = tiers_of(record)
        if not tiers:
            continue
        parts = [(t, tiers[t][1]) for t in TIERS if t in tiers]
        total = sum(share for _, share in parts)
        busiest = max(parts, key=lambda p: p[1])[0] if parts else "–"
        p50 = (record.get("latency_us") or {}).get("p50")
        row = {"case": _label(record), "ops": _fmt(_num(record.get("ops_per_s"))),
               "p50": _fmt(_num(p50)), "bar": f"{bar_text(parts)} {total:.0%}",
               "busiest": busiest}
        for tier in TIERS:
            if tier in tiers:
                us, share = tiers[tier]
                row[tier], row[f"{tier}_share"] = _fmt(us), f"{share:.1%}"
        if index in extra:
            row["client_extra"] = f"+{extra[index]:,.1f}"
        profile = record.get("profile") or {}
        ratio = _num(profile.get("overhead_ratio"))
        row["overhead"] = f"x{ratio:.3f}" if ratio is not None else ""
        graphs = [Link(name, str(t["svg"])) for name, t in (profile.get("tiers") or {}).items()
                  if t.get("svg")]
        row["graphs"] = ", ".join(g.label for g in graphs)
        rows.append(row)
        anchor = f"breakdown-{case_anchor(record)}" if case_anchor(record) else ""
        anchors.append(anchor)   # the workload's own table holds the plain case id
        links.append({"graphs": graphs} if graphs else {})
        bars.append(StackedBar(row["case"], parts, anchor))
    if not rows:
        return None
    shown = [t for t in TIERS if any(t in r for r in rows)]
    columns = [Column("case", "case"), Column("ops", "ops/s ↑", True),
               Column("p50", "p50 µs ↓", True, compact=False),
               *(Column(t, f"{t} µs/op", True) for t in shown),
               *([Column("client_extra", "client µs/op over the least", True)]
                 if any("client_extra" in r for r in rows) else []),
               *(Column(f"{t}_share", f"{t} share", True, compact=False) for t in shown),
               Column("busiest", "busiest tier", compact=False),
               Column("bar", "share of the machine (0–100%)")]
    if any(r["overhead"] for r in rows):
        columns += [Column("overhead", "profiled / unprofiled", True),
                    Column("graphs", "flame graphs", compact=False)]
    legend = ", ".join(f"{BLOCKS[t]} {t}" for t in shown)
    table = Table("Cost breakdown: CPU per operation by tier", columns, rows,
                  caption=f"µs of CPU (user+sys) per operation by tier; bar: each tier's "
                          f"share of the machine's CPU capacity during the window ({legend}, "
                          f"· idle), then their sum (docs/breakdown.md)",
                  anchor="breakdown", row_anchors=anchors, links=links)
    chart = StackedBarChart("Share of the machine's CPU by tier", shown, bars,
                            anchor="breakdown-chart",
                            note="A tier near its share of one core per process it runs "
                                 "on, or the machine near 100%, is the bottleneck.")
    return Section("Cost breakdown", [table, chart])
