"""webtech's report: the study's tables, tests x stacks at each client count (ops/s
with their 95% interval, and as a fraction of the static-file limit row), server CPU
per request, one grouped bar chart per table, and every case in the exports."""

from __future__ import annotations

from typing import Any

from dbstand.report.model import (
    Bar,
    BarChart,
    Column,
    Measurement,
    Report,
    Section,
    Table,
    fmt,
    measurement,
)
from dbstand.workloads.network_axis import path_lines, paths_label
from dbstand.workloads.webtech.rules import TESTS

CAPTION = ("ops/s ↑: successful requests per second, mean of the runs (±: 95% CI); "
           "% limit: the cell as a share of the best static-file limit row (nginx or "
           "Apache serving file/big) at the same client count; CPU µs/req ↓: user+sys CPU "
           "of the stack's whole process tree (and of the database server) per request.")
DATA_COLUMNS = ["stack", "limit", "test", "mode", "clients", "status", "ops_per_s",
                "ci95_pct", "unstable", "ops_per_s_runs", "app_cpu_us_per_req",
                "db_cpu_us_per_req", "app_peak_rss_mb", "error_rate", "errors", "p50_us",
                "p99_us", "p999_us", "limit_fraction", "language", "framework", "web_server",
                "error"]


def _limit(records: list[dict[str, Any]], test: str, mode: str) -> float | None:
    values = [r["ops_per_s"] for r in records if r.get("status") == "ok"
              and (r.get("stack_labels") or {}).get("limit") and r.get("op") == test
              and r.get("mode") == mode]
    return max(values) if values else None


def test_name(r: dict[str, Any]) -> str:
    """The test, with its --db-rtt path when it ran on one: "db (1 ms)"."""
    label = paths_label(r.get("params") or {})
    op = str(r.get("op", ""))
    return op if label is None else f"{op} ({label})"


def _test_order(name: str) -> tuple[int, str]:
    op, _, path = name.partition(" (")
    return (TESTS.index(op) if op in TESTS else len(TESTS), path)


def data_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        labels = r.get("stack_labels") or {}
        lat = r.get("latency_us") or {}
        limit = _limit(records, r.get("op", ""), r.get("mode", ""))
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
            "p999_us": lat.get("p999"),
            "limit_fraction": round(r["ops_per_s"] / limit, 3) if limit and r.get("ops_per_s")
            else None,
            "language": labels.get("language"), "framework": labels.get("framework"),
            "web_server": labels.get("web_server"), "error": r.get("error"),
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
    if row.get("limit_fraction") is not None and not row["limit"]:
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


def notes(rows: list[dict[str, Any]]) -> list[str]:
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
    if any(r["unstable"] for r in rows):
        out.append("! UNSTABLE: the runs' 95% interval is wider than 5% of the mean "
                   "(more --repeats, or a quieter machine)")
    return out


def build(records: list[dict[str, Any]], title: str) -> Report:
    rows = data_rows(records)
    tests = sorted({str(r["test"]) for r in rows}, key=_test_order)
    modes = sorted({r["mode"] for r in rows if r["mode"].startswith("clients:")},
                   key=lambda m: int(m.split(":")[1]))
    sections = [Section(f"{m.split(':')[1]} client(s)", [mode_chart(rows, m, tests),
                                                          mode_table(rows, m, tests)])
                for m in modes]
    return Report(title, sections, notes=notes(rows) + path_lines(records, per="request"),
                  caption=CAPTION, data=rows,
                  data_columns=DATA_COLUMNS, measurements=measurements(records))


def measurements(records: list[dict[str, Any]]) -> list[Measurement]:
    """Per case: requests/s; each repeated load run gives one sample (1 / its rate)."""
    return [measurement(r, f"webtech {r.get('stack')} {test_name(r)} [{r.get('mode')}]",
                        "requests/s", r.get("ops_per_s"), operation="request",
                        samples=[1.0 / x for x in r.get("ops_per_s_runs") or [] if x])
            for r in records]
