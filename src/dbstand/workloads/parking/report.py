"""The parking workload's report: passes/s with its CI, server-side cost per pass (app
CPU, DB CPU, statements by kind beside the study's table, log volume), the cost of
logging (on vs off, when both ran), and per-function latency.

Computed from the results file alone, so `dbstand report FILE` shows what the run
showed. Units and directions are named in every table.
"""

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
    measurement,
)

KINDS = (("select", "SELECT"), ("select_for_update", "FOR UPD"), ("update", "UPDATE"),
         ("insert", "INSERT"), ("delete", "DELETE"))
#: the study's table 2 (its SQLAlchemy and YB.ORM builds), statements per pass
STUDY = {"select": "78-106", "select_for_update": "88-89", "update": "42-45",
         "insert": "27", "delete": "0"}
FUNCTIONS = ("get_service_info", "create_reservation", "pay_reservation", "get_user_account",
             "stop_service", "account_transfer", "cancel_reservation", "check_plate_number",
             "leave_parking", "issue_ticket")
CAPTION = ("passes/s ↑ higher is better (68 calls a pass; ±: 95% CI over batches); "
           "ms, CPU ms, statements, log KB and lines are per pass, ↓ lower is better; "
           "logging cost: time and app CPU per pass with logging on vs off, in % of off.")


def _key(r: dict[str, Any]) -> tuple[str, str, int]:
    return (str(r.get("target")), str(r.get("stack")), int(r.get("params", {}).get("users", 1)))


def logging_costs(records: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, float]]:
    """Per (target, stack, users) with both logging on and off measured: the extra time
    and app CPU per pass that logging costs, in % of the logging-off figure."""
    on: dict[tuple[str, str, int], dict[str, Any]] = {}
    off: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in records:
        if r.get("status") == "ok":
            (on if r.get("logging") == "on" else off)[_key(r)] = r
    out = {}
    for key, r_on in on.items():
        r_off = off.get(key)
        if r_off is None:
            continue
        cost: dict[str, float] = {}
        for field in ("ms_per_pass", "app_cpu_ms_per_pass"):
            a, b = r_on.get(field), r_off.get(field)
            if a and b:
                cost[field] = round((a / b - 1) * 100, 1)
        out[key] = cost
    return out


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per case: what every output format shows."""
    costs = logging_costs(records)
    out = []
    for r in records:
        params = r.get("params", {})
        row: dict[str, Any] = {
            "target": r.get("target"), "stack": r.get("stack"),
            "logging": r.get("logging", params.get("logging")),
            "users": params.get("users"), "status": r.get("status"),
            "error": r.get("error", ""), "unstable": bool(r.get("unstable")),
            "passes_per_s": r.get("passes_per_s"), "ci95_pct": r.get("ci95_pct"),
            "ms_per_pass": r.get("ms_per_pass"),
            "app_cpu_ms_per_pass": r.get("app_cpu_ms_per_pass"),
            "db_cpu_ms_per_pass": r.get("db_cpu_ms_per_pass"),
            "log_kb_per_pass": None if r.get("log_bytes_per_pass") is None
            else round(r["log_bytes_per_pass"] / 1024, 2),
            "log_lines_per_pass": r.get("log_lines_per_pass"),
        }
        statements = r.get("statements_per_pass") or {}
        for kind, _ in KINDS:
            row[f"stmt_{kind}"] = statements.get(kind)
        cost = costs.get(_key(r), {}) if row["logging"] == "on" else {}
        row["logging_cost_time_pct"] = cost.get("ms_per_pass")
        row["logging_cost_cpu_pct"] = cost.get("app_cpu_ms_per_pass")
        out.append(row)
    return out


def _cost_text(row: dict[str, Any]) -> str:
    t, c = row["logging_cost_time_pct"], row["logging_cost_cpu_pct"]
    if t is None and c is None:
        return ""
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:+.1f}%"

    return f"{pct(t)} / {pct(c)}"


def _cells(row: dict[str, Any], several_targets: bool) -> list[str]:
    ok = row["status"] == "ok"
    head = ([str(row["target"])] if several_targets else []) + \
        [str(row["stack"]), str(row["logging"]), str(row["users"])]
    if not ok:
        return [*head, "FAILED", *[""] * (7 + len(KINDS))]
    flag = " UNSTABLE" if row["unstable"] else ""
    return [
        *head, _num(row["passes_per_s"], 2) + flag, f"±{_num(row['ci95_pct'], 1)}%",
        _num(row["ms_per_pass"], 1), _num(row["app_cpu_ms_per_pass"], 1),
        _num(row["db_cpu_ms_per_pass"], 1),
        *(_num(row[f"stmt_{k}"], 1) for k, _ in KINDS),
        _num(row["log_kb_per_pass"], 1), _num(row["log_lines_per_pass"], 0), _cost_text(row)]


def _headers(several_targets: bool) -> list[tuple[str, bool]]:
    return ([("target", False)] if several_targets else []) + [
        ("stack", False), ("logging", False), ("users", True), ("passes/s", True),
        ("±CI", True), ("ms/pass", True), ("app CPU ms", True), ("DB CPU ms", True),
        *((f"{title}/pass", True) for _, title in KINDS),
        ("log KB", True), ("log lines", True), ("logging cost time/CPU", True)]


def _study_row(several_targets: bool) -> list[str]:
    lead = [""] if several_targets else []
    return [*lead, "study (table 2)", "", "", "", "", "", "", "",
                   *(STUDY[k] for k, _ in KINDS), "", "", ""]


def function_table(records: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Per-function latency, p50 / p99 in µs, one column per measured case."""
    ok = [r for r in records if r.get("status") == "ok" and r.get("functions")]
    several = len({str(r.get("target")) for r in ok}) > 1
    header = ["function", "calls/pass"] + [
        (f"{r.get('target_kind')} " if several else "") +
        f"{r['stack']} log {r.get('logging')} u{r.get('users')}" for r in ok]
    body = []
    for function in FUNCTIONS:
        line = [function, ""]
        for r in ok:
            f = r["functions"].get(function)
            if f and not line[1]:
                counted = r.get("iterations", 0) * r.get("revs", 0)
                line[1] = f"{f['calls'] / counted:g}" if counted else ""
            line.append("–" if not f else f"{f['p50_us'] / 1000:.2f} / {f['p99_us'] / 1000:.2f}")
        body.append(line)
    return header, body


def footnotes(records: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in records:
        if r.get("status") != "ok":
            lines.append(f"FAILED {r.get('stack')} logging {r.get('logging') or ''} "
                         f"users {r.get('params', {}).get('users')}: {r.get('error')}")
    sources = {(r.get("target_kind"), r.get("statements_source"), r.get("statements_note", ""))
               for r in records if r.get("status") == "ok"}
    for kind, source, note in sorted(sources, key=str):
        lines.append(f"statements on {kind}: {source}" + (f" ({note})" if note else ""))
    dbs = {(r.get("target_kind"), r.get("db_pid_source")) for r in records
           if r.get("status") == "ok"}
    for kind, source in sorted(dbs, key=str):
        lines.append(f"DB CPU on {kind}: {source}")
    if any(r.get("status") == "ok" for r in records):
        lines.append("Each batch starts from re-seeded places (untimed); the conformance "
                     "suite passed before each case was measured.")
    return lines


def _grid(records: list[dict[str, Any]]) -> tuple[list[tuple[str, bool]], list[list[str]]]:
    """Headers and cells (study row last), without columns no case filled."""
    data = rows(records)
    several = len({str(r["target"]) for r in data}) > 1
    headers = _headers(several)
    cells = [_cells(r, several) for r in data]
    keep = [i for i in range(len(headers))
            if i < 4 or any(row[i] not in ("", "–", "0.0", "0", "FAILED") for row in cells)]
    study = _study_row(several)
    fu = next(i for i, (h, _) in enumerate(headers) if h == "FOR UPD/pass")
    if fu not in keep:  # counters that fold FOR UPDATE into select (MySQL's Com_select)
        study[fu - 1] = "166-194 (FOR UPD incl.)"
    with_study = any(headers[i][0].endswith("/pass") and study[i] for i in keep)
    grid = [[row[i] for i in keep] for row in [*cells, *([study] if with_study else [])]]
    return [headers[i] for i in keep], grid


def build(records: list[dict[str, Any]], title: str) -> Report:
    """The study's table (study row last), per-function latency, footnotes."""
    data = rows(records)
    if len({str(r["target"]) for r in data}) == 1 and data:
        title += f" on {data[0]['target']}"
    headers, grid = _grid(records)
    columns = [Column(f"c{i}", name, right) for i, (name, right) in enumerate(headers)]
    styles: list[str | None] = [
        ("failed" if row["status"] != "ok" else "unstable" if row["unstable"] else None)
        for row in data] + ["limit"] * (len(grid) - len(data))
    blocks: list[Any] = [Table("", columns, [{f"c{i}": cell for i, cell in enumerate(line)}
                                             for line in grid], styles, CAPTION,
                               anchor="parking")]
    head, body = function_table(records)
    if body and len(head) > 2:
        blocks.append(Table("latency per function: p50 / p99 in ms (↓ lower is better)",
                            [Column(f"f{i}", name, i > 0) for i, name in enumerate(head)],
                            [{f"f{i}": cell for i, cell in enumerate(line)} for line in body],
                            anchor="functions"))
    ok = [r for r in data if r["status"] == "ok" and r.get("passes_per_s")]
    if ok:
        blocks.insert(0, BarChart(
            "Suite passes per second", "passes per second (higher is better)",
            [(f"logging {log}", [Bar(f"{r['stack']} ×{r['users']}", r["passes_per_s"])
                                 for r in ok if r.get("logging") == log])
             for log in dict.fromkeys(r.get("logging") for r in ok)],
            anchor="chart-passes", table_anchor="parking",
            note="Bars: mean passes per second over the counted batches."))
    return Report(title, [Section("", blocks)], notes=footnotes(records),
                  data=data, data_columns=list(data[0]) if data else ["stack"],
                  extra={"study_statements_per_pass": STUDY,
                         "latency_ms_p50_p99": {"columns": head, "rows": body}},
                  measurements=measurements(records))


def measurements(records: list[dict[str, Any]]) -> list[Measurement]:
    """Per case: passes/s, with seconds per pass (one per batch) as the samples."""
    return [measurement(r, f"parking {r.get('stack')} logging {r.get('logging')} "
                           f"users {(r.get('params') or {}).get('users')} on "
                           f"{r.get('target_kind')}", "passes/s", r.get("passes_per_s"),
                        operation="suite pass")
            for r in records]
