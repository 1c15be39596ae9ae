"""webtech's report: the study's tables, tests x stacks at each client count (ops/s
with their 95% interval, and as a fraction of the static-file limit row), server CPU
per request, one grouped bar chart per table, and every case in the exports."""

from __future__ import annotations

from typing import Any

from dbstand.engine.machine_speed import unstable_lines
from dbstand.report.model import (
    Bar,
    BarChart,
    Column,
    Report,
    Section,
    Table,
    fmt,
    load_measurements,
)
from dbstand.workloads.network_axis import path_lines, paths_label
from dbstand.workloads.webtech import tls_table
from dbstand.workloads.webtech.options import TLS_PARAM
from dbstand.workloads.webtech.rules import TESTS

CAPTION = ("ops/s ↑: successful requests per second, mean of the runs (±: 95% CI); "
           "% limit: the cell as a share of the best static-file limit row (nginx or "
           "Apache serving file/big) at the same client count, never above 100%: a cell "
           "whose interval lies wholly above the limit's says \"limit row beaten\" with "
           "what differs, one within it \"≈ limit\"; CPU µs/req ↓: user+sys CPU "
           "of the stack's whole process tree (and of the database server) per request.")
DATA_COLUMNS = ["stack", "limit", "test", "mode", "clients", "status", "ops_per_s",
                "ci95_pct", "unstable", "ops_per_s_runs", "app_cpu_us_per_req",
                "db_cpu_us_per_req", "app_peak_rss_mb", "error_rate", "errors", "p50_us",
                "p99_us", "p999_us", "limit_fraction", "limit_beaten", "bytes_per_request",
                "language", "framework", "web_server",
                "error", *tls_table.DATA_COLUMNS]


def _tls(r: dict[str, Any]) -> bool:
    return (r.get("params") or {}).get(TLS_PARAM) == "on"


def _limit(records: list[dict[str, Any]], test: str, mode: str,
           tls: bool = False) -> dict[str, Any] | None:
    """The best limit row's record for a test at a client count (behind TLS or not)."""
    found = [r for r in records if r.get("status") == "ok"
             and (r.get("stack_labels") or {}).get("limit") and r.get("op") == test
             and r.get("mode") == mode and r.get("ops_per_s") and _tls(r) == tls]
    return max(found, key=lambda r: r["ops_per_s"]) if found else None


def _bounds(r: dict[str, Any]) -> tuple[float, float]:
    half = r["ops_per_s"] * (r.get("ci95_pct") or 0) / 100
    return r["ops_per_s"] - half, r["ops_per_s"] + half


def limit_share(r: dict[str, Any], limit: dict[str, Any] | None,
                ) -> tuple[float | None, str | None]:
    """(share of the limit row, capped at 1; why the limit row is beaten, or None).

    A limit is what the machine allows, so a share above 100% is never printed: a
    cell whose interval lies wholly above the limit's is "limit row beaten" with what
    differs between the two answers (their size on the wire); one whose interval
    overlaps the limit's is at the limit (share 1)."""
    if limit is None or not r.get("ops_per_s") or r is limit:
        return None, None
    share = r["ops_per_s"] / limit["ops_per_s"]
    if share <= 1:
        return round(share, 3), None
    if _bounds(r)[0] <= _bounds(limit)[1]:
        return 1.0, None
    mine, theirs = r.get("bytes_per_request"), limit.get("bytes_per_request")
    if mine and theirs and abs(mine - theirs) > 0.02 * theirs:
        why = (f"answers {mine:,.0f} B a request against the limit row's {theirs:,.0f} B"
               f" ({limit.get('stack')})")
    else:
        why = (f"same answer size as the limit row ({limit.get('stack')}); its serving "
               "path is faster here")
    return 1.0, f"{share:.2f}x the limit row: {why}"


def test_name(r: dict[str, Any]) -> str:
    """The test, with its --db-rtt path when it ran on one and TLS when it was on:
    "db (1 ms)", "hello (TLS)"."""
    parts = [label] if (label := paths_label(r.get("params") or {})) else []
    parts += ["TLS"] if _tls(r) else []
    op = str(r.get("op", ""))
    return f"{op} ({'; '.join(parts)})" if parts else op


def _test_order(name: str) -> tuple[int, str]:
    op, _, path = name.partition(" (")
    return (TESTS.index(op) if op in TESTS else len(TESTS), path)


def data_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        labels = r.get("stack_labels") or {}
        lat = r.get("latency_us") or {}
        share, beaten = limit_share(r, _limit(records, r.get("op", ""), r.get("mode", ""),
                                              _tls(r)))
        out.append({
            "stack": r.get("stack"), "limit": bool(labels.get("limit")), "test": test_name(r),
            "mode": r.get("mode"), "clients": (r.get("params") or {}).get("clients"),
            "status": r.get("status"), "ops_per_s": r.get("ops_per_s"),
            "ci95_pct": r.get("ci95_pct"), "unstable": bool(r.get("unstable")),
            "ops_per_s_runs": r.get("ops_per_s_runs"),
            "app_cpu_us_per_req": r.get("app_cpu_us_per_req"),
            "db_cpu_us_per_req": r.get("db_cpu_us_per_req"),
            "app_peak_rss_mb": r.get("app_peak_rss_mb"), "error_rate": r.get("error_rate"),
            "errors": r.get("errors"), "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
            "p999_us": lat.get("p999"), "limit_fraction": share, "limit_beaten": beaten,
            "bytes_per_request": r.get("bytes_per_request"),
            "language": labels.get("language"), "framework": labels.get("framework"),
            "web_server": labels.get("web_server"), "error": r.get("error"),
            "target_ci_pct": (r.get("load") or {}).get("target_ci_pct"),
            **tls_table.data(r),
        })
    return out


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    if row["status"] != "ok":
        return "FAILED"
    text = fmt(row["ops_per_s"], 0)
    if row.get("ci95_pct") is not None:
        text += f" ±{row['ci95_pct']:.0f}%"
    if row.get("limit_beaten"):
        text += " (limit row beaten)"
    elif row.get("limit_fraction") == 1.0 and not row["limit"]:
        text += " (≈ limit)"
    elif row.get("limit_fraction") is not None and not row["limit"]:
        text += f" ({row['limit_fraction']:.0%})"
    return text + (" !" if row["unstable"] else "")


def mode_table(rows: list[dict[str, Any]], mode: str, tests: list[str]) -> Table:
    stacks = list(dict.fromkeys(r["stack"] for r in rows if r["mode"] == mode))
    by = {(r["stack"], r["test"]): r for r in rows if r["mode"] == mode}
    columns = [Column("stack", "stack"), *(Column(t, f"{t} ops/s ↑", True) for t in tests),
               Column("cpu", "CPU µs/req ↓ (hello/db)", True)]
    out_rows, styles = [], []
    for stack in sorted(stacks, key=lambda s: (not any(by.get((s, t), {}).get("limit")
                                                       for t in tests), s)):
        cells = {"stack": stack, **{t: _cell(by.get((stack, t))) for t in tests}}
        cpu = [by.get((stack, t), {}).get("app_cpu_us_per_req") for t in ("hello", "db")]
        cells["cpu"] = " / ".join(fmt(c, 0) for c in cpu)
        out_rows.append(cells)
        mine = [by[(stack, t)] for t in tests if (stack, t) in by]
        styles.append("limit" if any(r["limit"] for r in mine) else
                      "failed" if any(r["status"] != "ok" for r in mine) else
                      "unstable" if any(r["unstable"] for r in mine) else None)
    clients = mode.split(":", 1)[-1]
    who = "one user" if clients == "1" else f"{clients} users"
    return Table(f"webtech, {who} ({mode}): requests/s per test (↑ higher is better; "
                 "% of the static limit in brackets; ! unstable)", columns, out_rows, styles,
                 anchor=f"table-{mode.replace(':', '-')}")


def mode_chart(rows: list[dict[str, Any]], mode: str, tests: list[str]) -> BarChart:
    groups = []
    for test in tests:
        bars = []
        for r in rows:
            if r["mode"] == mode and r["test"] == test and r["status"] == "ok":
                half = r["ops_per_s"] * (r.get("ci95_pct") or 0) / 100
                bars.append(Bar(r["stack"], r["ops_per_s"], r["ops_per_s"] - half,
                                r["ops_per_s"] + half, "UNSTABLE" if r["unstable"] else ""))
        if bars:
            groups.append((test, bars))
    anchor = f"table-{mode.replace(':', '-')}"
    return BarChart(f"Requests per second, {mode}", "requests per second (higher is better)",
                    groups, anchor=f"chart-{anchor}", table_anchor=anchor)


def notes(rows: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[str]:
    """Below the tables: failures, open-loop latencies, beaten limits, the UNSTABLE count."""
    out = []
    failed: dict[str, str] = {}
    for r in rows:
        if r["status"] != "ok":
            failed.setdefault(r["stack"], r["error"])
    out += [f"FAILED {stack}: {error}" for stack, error in failed.items()]
    opens = [r for r in rows if r["mode"].startswith("open") and r["status"] == "ok"]
    for r in opens:
        out.append(f"open loop {r['stack']} /{r['test']}: {fmt(r['ops_per_s'], 0)} req/s, "
                   f"corrected latency p50 {fmt(r['p50_us'], 0)} µs, p99 {fmt(r['p99_us'], 0)}"
                   f" µs, p99.9 {fmt(r['p999_us'], 0)} µs")
    for r in rows:
        if r.get("limit_beaten"):
            out.append(f"limit row beaten: {r['stack']} /{r['test']} [{r['mode']}], "
                       f"{r['limit_beaten']}")
    targets = sorted({r.get("target_ci_pct") or 5.0 for r in rows if r["unstable"]})
    out += unstable_lines(records, "the runs' 95% interval is still wider than "
                          f"{'/'.join(f'{t:g}' for t in targets)}% of the mean at the cap "
                          "(more --max-runs, or a quieter machine)")
    return out


def build(records: list[dict[str, Any]], title: str) -> Report:
    rows = data_rows(records)
    tests = sorted({str(r["test"]) for r in rows}, key=_test_order)
    modes = sorted({r["mode"] for r in rows if r["mode"].startswith("clients:")},
                   key=lambda m: int(m.split(":")[1]))
    sections = [Section(f"{m.split(':')[1]} client(s)", [mode_chart(rows, m, tests),
                                                          mode_table(rows, m, tests)])
                for m in modes]
    if (tls := tls_table.section(records)) is not None:
        sections.append(tls)
    return Report(title, sections,
                  notes=notes(rows, records) + path_lines(records, per="request"),
                  caption=CAPTION, data=rows,
                  data_columns=DATA_COLUMNS,
                  measurements=load_measurements(records, _measurement_name))


def _measurement_name(r: dict[str, Any]) -> str:
    return f"webtech {r.get('stack')} {test_name(r)} [{r.get('mode')}]"
