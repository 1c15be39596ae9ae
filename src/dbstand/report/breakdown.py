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
    return out


def _profiler_share(record: dict[str, Any]) -> float | None:
    """The profilers' CPU over the time they ran (they run a little beyond the windows),
    as a share of the machine; JFR samples inside the JVM and shows in the app tier."""
    tiers = (record.get("profile") or {}).get("tiers") or {}
    shares = [cpu / wall / _cores(record) for t in tiers.values()
              if (cpu := _num(t.get("profiler_cpu_s"))) is not None
              and (wall := _num(t.get("profiled_s")))]
    return sum(shares) if shares else None


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
    return " ".join(b for b in bits if b) + (" [profiled]" if record.get("profile") else "")


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def section(records: list[dict[str, Any]]) -> Section | None:
    """The breakdown table and its stacked bars, and the flame graphs of profiled cases."""
    rows, anchors, links, bars = [], [], [], []
    for record in records:
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
