"""docquery's report: the study's table (stacks x tests, requests/s), with the ratios
it is about (async/sync and ODM/raw against the blocking driver on the same server),
ApacheBench's table per case, and requests/s and percentile charts."""

from __future__ import annotations

from typing import Any

from dbstand.engine.machine_speed import unstable_lines
from dbstand.report.model import (
    Bar,
    BarChart,
    Column,
    DotChart,
    Report,
    Section,
    Table,
    fmt,
    load_measurements,
)
from dbstand.workloads.network_axis import path_lines, paths_label

#: the reference of each stack's ratio: the blocking driver of its family
REFERENCE = {"docquery-tornado-motor": "docquery-tornado-pymongo",
             "docquery-tornado-pymongo-async": "docquery-tornado-pymongo",
             "docquery-tornado-pymongo-gevent": "docquery-tornado-pymongo",
             "docquery-tornado-mongoengine": "docquery-tornado-pymongo",
             "docquery-tornado-asyncpg": "docquery-tornado-psycopg",
             "docquery-tornado-sqlalchemy-async": "docquery-tornado-psycopg"}
PERCENTILES = ("50", "66", "75", "80", "90", "95", "98", "99", "100")
CAPTION = ("req/s ↑: successful requests per second, mean of the runs (±: 95% CI); "
           "vs ref: requests/s against the blocking driver of the same family on the same "
           "server and test (pymongo for the MongoDB stacks, psycopg for the SQL ones); "
           "ms ↓: ApacheBench's time per request and percentiles; CPU µs/req ↓: the "
           "Tornado process and the database server(s), per request.")
DATA_COLUMNS = ["stack", "server", "test", "mode", "clients", "status", "ops_per_s",
                "ci95_pct", "unstable", "vs_reference", "reference", "total_time_s",
                "time_per_request_ms", "time_per_request_all_ms", *[f"p{p}_ms" for p in
                                                                    PERCENTILES],
                "app_cpu_us_per_req", "db_cpu_us_per_req", "errors", "error"]


def _short(stack: str) -> str:
    return stack.removeprefix("docquery-tornado-")


def server_of(r: dict[str, Any]) -> str:
    """The server read, with its --db-rtt path when the case had one (the Tornado ->
    database hop): "FerretDB ... (1 ms)"."""
    server = str(r.get("server") or (r.get("params") or {}).get("server"))
    label = paths_label(r.get("params") or {})
    return server if label is None else f"{server} ({label})"


def data_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by = {(r.get("stack"), server_of(r), r.get("op"), r.get("mode")): r for r in records
          if r.get("status") == "ok"}
    out = []
    for r in records:
        ab = r.get("ab") or {}
        ref_stack = REFERENCE.get(str(r.get("stack")))
        ref = by.get((ref_stack, server_of(r), r.get("op"), r.get("mode")))
        ratio = (round(r["ops_per_s"] / ref["ops_per_s"], 3) if ref and r.get("ops_per_s")
                 and ref.get("ops_per_s") else None)
        row = {"stack": r.get("stack"), "server": server_of(r), "test": r.get("op"),
               "mode": r.get("mode"), "clients": (r.get("params") or {}).get("clients"),
               "status": r.get("status"), "ops_per_s": r.get("ops_per_s"),
               "ci95_pct": r.get("ci95_pct"), "unstable": bool(r.get("unstable")),
               "vs_reference": ratio, "reference": ref_stack,
               "total_time_s": ab.get("total_time_s"),
               "time_per_request_ms": ab.get("time_per_request_ms"),
               "time_per_request_all_ms": ab.get("time_per_request_all_ms"),
               "app_cpu_us_per_req": r.get("app_cpu_us_per_req"),
               "db_cpu_us_per_req": r.get("db_cpu_us_per_req"), "errors": r.get("errors"),
               "error": r.get("error")}
        for p in PERCENTILES:
            row[f"p{p}_ms"] = (ab.get("percentiles_ms") or {}).get(p)
        out.append(row)
    return out


def study_table(rows: list[dict[str, Any]]) -> Table:
    """The seed's shape: one row per stack and server, a column per test and mode."""
    columns_keys = list(dict.fromkeys((r["test"], r["mode"]) for r in rows))
    columns = [Column("stack", "stack"), Column("server", "server"),
               *(Column(f"{t}|{m}", f"{t} {m} req/s ↑", True) for t, m in columns_keys),
               Column("ratio", "vs ref ({} {})".format(*columns_keys[0]) if columns_keys
                      else "vs ref", True),
               Column("cpu", "CPU µs/req app / db ↓", True)]
    lines, styles = [], []
    groups = list(dict.fromkeys((r["stack"], r["server"]) for r in rows))
    for stack, server in groups:
        mine = {(r["test"], r["mode"]): r for r in rows
                if r["stack"] == stack and r["server"] == server}
        cells = {"stack": _short(str(stack)), "server": str(server)}
        for t, m in columns_keys:
            r = mine.get((t, m))
            cells[f"{t}|{m}"] = "" if r is None else ("FAILED" if r["status"] != "ok" else
                                                      f"{fmt(r['ops_per_s'], 0)}" + (
                f" ±{r['ci95_pct']:.0f}%" if r.get("ci95_pct") is not None else ""))
        first = next(iter(mine.values()))
        cells["ratio"] = f"{first['vs_reference']:.2f}x" if first.get("vs_reference") else ""
        cells["cpu"] = (f"{fmt(first.get('app_cpu_us_per_req'), 0)} / "
                        f"{fmt(first.get('db_cpu_us_per_req'), 0)}")
        lines.append(cells)
        styles.append("failed" if any(r["status"] != "ok" for r in mine.values()) else
                      "unstable" if any(r["unstable"] for r in mine.values()) else None)
    return Table("docquery: requests per second (↑ higher is better)", columns, lines, styles,
                 anchor="docquery")


def ab_tables(rows: list[dict[str, Any]]) -> Table:
    columns = [Column("case", "stack / server / test / mode"),
               Column("total", "total s", True), Column("rps", "req/s ↑", True),
               Column("tpr", "ms/req ↓", True), Column("tpr_all", "ms/req (all)", True),
               *(Column(f"p{p}", f"{p}% ms", True) for p in PERCENTILES)]
    lines = []
    for r in rows:
        if r["status"] != "ok":
            continue
        lines.append({"case": f"{_short(str(r['stack']))} / {r['server']} / {r['test']} / "
                              f"{r['mode']}",
                      "total": fmt(r["total_time_s"], 3), "rps": fmt(r["ops_per_s"], 1),
                      "tpr": fmt(r["time_per_request_ms"], 2),
                      "tpr_all": fmt(r["time_per_request_all_ms"], 3),
                      **{f"p{p}": fmt(r[f"p{p}_ms"], 1) for p in PERCENTILES}})
    return Table("ApacheBench's table per case (percentage of requests served within a "
                 "time, ms)", columns, lines, anchor="ab")


def build(records: list[dict[str, Any]], title: str) -> Report:
    rows = data_rows(records)
    ok = [r for r in rows if r["status"] == "ok"]
    groups = []
    for test, mode in dict.fromkeys((r["test"], r["mode"]) for r in ok):
        groups.append((f"{test} {mode}", [Bar(f"{_short(str(r['stack']))} @ {r['server']}",
                                              r["ops_per_s"]) for r in ok
                                          if r["test"] == test and r["mode"] == mode]))
    chart = BarChart("Requests per second", "requests per second (higher is better)", groups,
                     anchor="chart-rps", table_anchor="docquery",
                     note="Bars: mean requests per second over the runs.")
    curves = DotChart("Latency percentiles (ApacheBench's table)", "ms per request, log "
                      "scale (lower is better)", ["50", "90", "99", "100"],
                      [(f"{_short(str(r['stack']))} @ {r['server']} {r['test']} {r['mode']}",
                        {p: r[f"p{p}_ms"] for p in ("50", "90", "99", "100")
                         if r[f"p{p}_ms"]}) for r in ok],
                      anchor="chart-percentiles", table_anchor="ab")
    notes = [f"FAILED {r['stack']} on {r['server']}: {r['error']}" for r in rows
             if r["status"] != "ok"]
    notes += unstable_lines(records, "the runs' 95% interval is still wider than the "
                                     "target (--ci) at the cap (--max-runs)")
    return Report(title, [Section("", [chart, study_table(rows)]),
                          Section("ApacheBench's tables", [curves, ab_tables(rows)])],
                  notes=notes + path_lines(records, per="request"), caption=CAPTION,
                  data=rows, data_columns=DATA_COLUMNS,
                  measurements=load_measurements(records, _measurement_name))


def _measurement_name(r: dict[str, Any]) -> str:
    return f"docquery {r.get('stack')} {r.get('server') or ''} {r.get('op')} [{r.get('mode')}]"
