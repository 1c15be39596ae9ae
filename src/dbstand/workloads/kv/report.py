"""kv's contribution to the report: one row per case (every column in the exports,
the compact set in the terminal), the study's ratios (coroutines/sync, threads/sync,
processes, sql/binary, uvloop/asyncio) with their intervals, throughput and latency
charts, sweep verdicts, bimodal cases with both modes."""

from __future__ import annotations

from typing import Any

from dbstand.engine.machine_speed import unstable_lines
from dbstand.engine.steadiness import describe as describe_slowdown
from dbstand.report.model import (
    Bar,
    BarChart,
    Column,
    DotChart,
    Measurement,
    Report,
    Section,
    Table,
    case_anchor,
    measurement,
)
from dbstand.workloads.kv.ratios import kv_ratios
from dbstand.workloads.kv.table import (
    baseline_text,
    bimodal_of,
    bimodal_text,
    case_label,
    formatted,
    loop_of,
    stack_label,
    sweep_lines,
    table_rows,
)
from dbstand.workloads.network_axis import path_lines

#: probe columns: shown when at least one row has a value
PROBE_KEYS = ("client_cpu_us", "server_cpu_us", "server_rss_mb", "stmts_per_op", "stmt_kinds",
              "path", "rtt_ms", "round_trips", "floor_us", "p50_added_us", "proxy_cpu_us")

COLUMNS = (
    Column("stack", "stack"),
    Column("target", "target"),
    Column("mode", "mode"),
    Column("loop", "loop"),
    Column("op", "op"),
    Column("path", "path"),
    Column("ops_per_s", "ops/s ↑", True),
    Column("ci95_pct", "±CI%", True),
    Column("vs_baseline", "vs baseline ↑", True),
    Column("iterations", "n", True),
    Column("p50", "p50 µs ↓", True),
    Column("p99", "p99 µs", True),
    Column("p999", "p99.9 µs", True),
    Column("max", "max µs", True, compact=False),
    Column("latency", "latency timed", compact=False),
    Column("harness_overhead_ns", "harness ns/op", True, compact=False),
    Column("client_cpu_us", "cli CPU µs/op ↓", True),
    Column("server_cpu_us", "srv CPU µs/op ↓", True),
    Column("server_rss_mb", "srv peak RSS MB", True, compact=False),
    Column("stmts_per_op", "stmts/op", True),
    Column("stmt_kinds", "statements by kind/op", compact=False),
    Column("rtt_ms", "RTT ms (measured)", True),
    Column("round_trips", "round trips/op", True),
    Column("floor_us", "floor µs/op", True),
    Column("p50_added_us", "p50 over direct µs", True),
    Column("proxy_cpu_us", "proxy CPU µs/op", True),
    Column("note", "note"),
)
CAPTION = ("↑ higher is better, ↓ lower is better. ops/s: mean over iterations, ±CI%: its "
           "95% confidence interval (BIMODAL: the two clusters of iterations, each as ops/s "
           "with its share, instead of a mean); vs baseline: ops/s over the baseline case "
           "of the same operation; n: iterations; latency per operation in µs; CPU "
           "(user+sys) of the client and of the database server and statements counted by "
           "the server, per operation. Paths (--db-rtt): direct, or through Toxiproxy with "
           "half the RTT each way; RTT measured before the case; round trips: the proxy's "
           "request-then-answer turns per operation; floor: round trips x RTT; p50 over "
           "direct: the added latency under the case's own load. `dbstand report FILE -f "
           "csv` has every column.")
DATA_KEYS = [c.key for c in COLUMNS] + ["unstable", "failed", "bimodal", "pinned"]


def _constant(records: list[dict[str, Any]], rows: list[dict[str, Any]]) -> set[str]:
    """Columns the compact view can drop: one target (in the title), one mode, one
    event loop, `vs baseline` when no operation was measured twice, empty probes."""
    drop = set()
    if len({str(c.get("target")) for c in records}) == 1:
        drop.add("target")
    if len({c.get("mode") for c in records}) == 1:
        drop.add("mode")
    if len({loop_of(c) for c in records if loop_of(c)}) <= 1:
        drop.add("loop")
    ops = [(c.get("workload"), c.get("op")) for c in records]
    if len(ops) == len(set(ops)):
        drop.add("vs_baseline")
    if not any(r["note"] for r in rows):
        drop.add("note")
    drop.update(key for key in PROBE_KEYS if all(r.get(key) is None for r in rows))
    return drop


def notes(rows: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[str]:
    """What does not fit in a cell: failures, and the native form of each op."""
    lines = [f"FAILED {row['stack']} {row['op']}: {row['error']}" for row in rows
             if row["failed"]]
    forms: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        if row.get("op_form"):
            key = (row["target"].split(":", 1)[0], row["op"], row["op_form"])
            if row["stack"] not in forms.setdefault(key, []):
                forms[key].append(row["stack"])
    several = len({stack for stacks in forms.values() for stack in stacks}) > 1
    for (kind, op, form), stacks in forms.items():
        who = f" ({', '.join(stacks)})" if several else ""
        lines.append(f"{op} on {kind}: {form}{who}")
    if any(row.get("limit") for row in rows):
        lines.append("LIMIT: a native client (pgbench) on the same table and statements: "
                     "how far the Python stacks are from what the server and network give")
    lines += unstable_lines(records, "their 95% confidence interval stayed wider than the "
                            "target; rerun on a quieter machine or raise --max-iterations.")
    why = [f"{case_label(r)} {r.get('op')}: {describe_slowdown(r['slowdown'])}"
           for r in records if r.get("unstable") and r.get("slowdown")]
    if why:
        lines.append("UNSTABLE, where the slower iterations lost their time "
                     "(docs/machine-speed.md): " + "; ".join(why))
    for r in records:
        b = bimodal_of(r)
        if b:
            lines.append(f"BIMODAL {case_label(r)} {r.get('op')}: two clusters of "
                         f"iterations, {bimodal_text(b)} ops/s (share of iterations); "
                         "their mean describes neither (client and server placement?)")
    pins = pinning_line(records)
    if pins:
        lines.append(pins)
    loaded = load_line(records)
    if loaded:
        lines.append(loaded)
    text = baseline_text(records) if any(r["vs_baseline"] is not None for r in rows) else ""
    return lines + ([text] if text else []) + sweep_lines(records) + path_lines(records)


def pinning_line(records: list[dict[str, Any]]) -> str:
    """How many cases ran pinned (client and server on their own CPUs), and where."""
    found = [((r.get("environment") or {}).get("server") or {}).get("cpu_pinning")
             for r in records if r.get("status") == "ok"]
    pins: list[dict[str, Any]] = [p for p in found if isinstance(p, dict)]
    if not pins:
        return ""
    on = [p for p in pins if p.get("enabled")]
    if not on:
        return f"CPU pinning: none ({pins[0].get('reason')})"
    placements: dict[str, list[dict[str, Any]]] = {}
    for pin in on:
        placements.setdefault(str(pin.get("placement") or "separate"), []).append(pin)
    parts = [f"{len(group)} {name} (client CPU {group[0].get('client_cpus')}, server CPU "
             f"{group[0].get('server_cpus') or '-'})" for name, group in placements.items()]
    return (f"CPU pinning: {len(on)} of {len(pins)} case(s) pinned: " + ", ".join(parts)
            + ("" if len(on) == len(pins)
               else " (the others: no server process here, or --no-pin)"))


def load_line(records: list[dict[str, Any]]) -> str:
    """How the tables were filled before the cases (untimed), and how fast."""
    loads = [r["data_load"] for r in records
             if r.get("status") == "ok" and isinstance(r.get("data_load"), dict)]
    if not loads:
        return ""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for load in loads:
        by_path.setdefault(str(load.get("path")), []).append(load)
    parts = []
    for path, group in by_path.items():
        rates = sorted(float(g.get("rows_per_s") or 0) for g in group)
        rows = sorted({int(g.get("rows") or 0) for g in group})
        span = (f"{rates[0]:,.0f}" if rates[0] == rates[-1]
                else f"{rates[0]:,.0f}-{rates[-1]:,.0f}")
        parts.append(f"{len(group)} by {path}, {'/'.join(f'{n:,}' for n in rows)} rows "
                     f"at {span} rows/s")
    return "tables loaded before each case (untimed): " + "; ".join(parts)


def ratio_table(records: list[dict[str, Any]]) -> Table | None:
    """The study's ratios, per connector and op (within this run)."""
    ratios = kv_ratios(records)
    if not ratios:
        return None
    columns = [Column("connector", "connector"), Column("op", "op"),
               Column("what", "ratio of ops/s"), Column("ratio", "ratio ↑", True),
               Column("ci", "±CI%", True), Column("note", "note")]
    rows = [{"connector": r.connector, "op": r.op, "what": r.what,
             "ratio": f"{r.value:.2f}x", "ci": f"±{r.ci_pct:.0f}",
             "note": " ".join(x for x in ("within noise" if r.within_noise else "",
                                          "UNSTABLE side" if r.shaky else "") if x)}
            for r in ratios]
    return Table("Ratios within this run: coroutines/one at a time, threads/sync, "
                 "processes, protocols, event loops (↑ above 1: the first is faster)",
                 columns, rows, ["unstable" if r.shaky else None for r in ratios],
                 anchor="ratios")


def _mode(r: dict[str, Any], loops: bool) -> str:
    loop = loop_of(r) if loops else ""
    return f"{r.get('mode')} {loop}".strip()


def _series(r: dict[str, Any], loops: bool) -> str:
    return f"{stack_label(r)} [{_mode(r, loops)}]"


def charts(records: list[dict[str, Any]]) -> list[BarChart | DotChart]:
    ok = [r for r in records if r.get("status") == "ok" and r.get("ops_per_s")]
    loops = len({loop_of(r) for r in ok if loop_of(r)}) > 1
    groups: dict[str, list[Bar]] = {}
    for r in ok:
        half = r["ops_per_s"] * (r.get("ci95_pct") or 0) / 100
        b = bimodal_of(r)
        low, high = r["ops_per_s"] - half, r["ops_per_s"] + half
        if b:  # the bar's whiskers span the two modes: the mean is neither
            low, high = b["modes"][1]["ops_per_s"], b["modes"][0]["ops_per_s"]
        flag = "BIMODAL " + bimodal_text(b) if b else "UNSTABLE" if r.get("unstable") else ""
        groups.setdefault(r["op"], []).append(Bar(
            _series(r, loops), r["ops_per_s"], low, high, flag))
    latency = [(f"{stack_label(r)} {r['op']} [{_mode(r, loops)}]", r["latency_us"])
               for r in ok if r.get("latency_us")]
    return [BarChart("Throughput per operation", "operations per second (higher is better)",
                     list(groups.items()), anchor="chart-throughput", table_anchor="cases"),
            DotChart("Latency per operation", "µs per operation, log scale (lower is better)",
                     ["p50", "p90", "p99", "p999"], latency, anchor="chart-latency",
                     table_anchor="cases",
                     note="Per-operation latency percentiles from HDR histograms.")]


def measurements(records: list[dict[str, Any]]) -> list[Measurement]:
    """Per case: ops/s (requests/s for `dbstand http`), per-op times, the HDR."""
    kinds = len({r.get("target_kind") for r in records}) > 1
    out = []
    for r in records:
        loop = " uvloop" if loop_of(r) == "uvloop" else ""
        name = f"{r.get('workload')} {stack_label(r)} {r.get('op')} [{r.get('mode')}{loop}]"
        if kinds:
            name += f" on {r.get('target_kind')}"
        http = r.get("workload") == "http"
        out.append(measurement(r, name, "requests/s" if http else "ops/s", r.get("ops_per_s"),
                               operation="request" if http else "operation"))
    return out


def build(records: list[dict[str, Any]], title: str) -> Report:
    rows = table_rows(records)
    drop = _constant(records, rows)
    columns = [Column(c.key, c.title, c.numeric, c.compact and c.key not in drop)
               for c in COLUMNS]
    if "target" in drop and records:
        title += f" on {records[0].get('target')}"
    table = Table("", columns, [{c.key: formatted(row, c.key) for c in COLUMNS}
                                for row in rows],
                  ["failed" if r["failed"] else "unstable" if r["unstable"] else
                   "limit" if r.get("limit") else None for r in rows], anchor="cases",
                  row_anchors=[case_anchor(r) for r in records])
    sections = [Section("Charts", [*charts(records)]), Section("Cases", [table])]
    ratios = ratio_table(records)
    if ratios is not None:
        sections.append(Section("Ratios", [ratios]))
    return Report(title, sections, notes=notes(rows, records), caption=CAPTION,
                  data=[{k: row.get(k) for k in DATA_KEYS} for row in rows],
                  data_columns=DATA_KEYS, measurements=measurements(records),
                  extra={"ratios": [r.as_dict() for r in kv_ratios(records)]})
