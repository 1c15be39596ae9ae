"""The parking workload's report: the study's cross-language table from one run.

For every case (stack x target x logging x users): passes/s with its CI, client time
per 20-pass batch (the study's figure 1), server CPU per pass over the stack's whole
process tree (figure 2) and its ratio to the baseline stack's (CPython + SQLAlchemy
unless `run parking --baseline` named another), database server CPU per pass,
statements by kind per pass beside the study's table 2, log volume per pass beside its
table 3. When logging ran both on and off, the effect of logging both ways, each
labelled: the gain from turning it off as a share of the logging-on figure (how the
study's table 4 reads) and its cost over the logging-off figure. Then per-function
latency.

Computed from the results file alone, so `dbstand report FILE` shows what the run
showed. Units and directions are named in every table. A statement kind the database
cannot count separately (SELECT ... FOR UPDATE in MariaDB's Com_select) is empty with
a note, never 0.
"""

from __future__ import annotations

from typing import Any

from dbstand.engine.machine_speed import unstable_lines
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
from dbstand.workloads.network_axis import path_lines, paths_label

KINDS = (("select", "SELECT"), ("select_for_update", "FOR UPD"), ("update", "UPDATE"),
         ("insert", "INSERT"), ("delete", "DELETE"))
#: the study's table 2: statements per suite pass
STUDY = {"select": "78-106", "select_for_update": "88-89", "update": "42-45",
         "insert": "27", "delete": "0"}
STUDY_STATEMENTS: dict[str, dict[str, int]] = {
    "CPython/PyPy + SQLAlchemy": {"select": 78, "select_for_update": 88, "update": 45,
                                  "insert": 27, "delete": 0},
    "C++ YB.ORM (SOCI, ODBC)": {"select": 106, "select_for_update": 89, "update": 42,
                                "insert": 27, "delete": 0},
}
#: the study's table 3: log size after 100 passes (MB, thousands of lines)
STUDY_LOG: dict[str, tuple[float, float]] = {
    "PyPy + SQLAlchemy": (19.02, 138.5), "CPython + SQLAlchemy": (18.97, 138.5),
    "C++ YB.ORM + SOCI": (20.78, 180.0), "C++ YB.ORM + ODBC": (20.95, 180.0)}
#: the study's table 4: % better with logging off (client time, server CPU), i.e. the
#: gain as a share of the logging-on figure
STUDY_LOGGING_GAIN: dict[str, tuple[float, float]] = {
    "PyPy + SQLAlchemy": (10.0, 11.0), "CPython + SQLAlchemy": (12.4, 26.0),
    "C++ YB.ORM + SOCI": (11.5, 19.2), "C++ YB.ORM + ODBC": (12.6, 21.4)}
#: the study's batch: 20 passes in a row, timed by the client (its figure 1)
BATCH_PASSES = 20
DEFAULT_BASELINE = "python-sqlalchemy"
FUNCTIONS = ("get_service_info", "create_reservation", "pay_reservation", "get_user_account",
             "stop_service", "account_transfer", "cancel_reservation", "check_plate_number",
             "leave_parking", "issue_ticket")
CAPTION = ("passes/s ↑ higher is better (68 calls a pass; ±CI: 95% CI over batches); "
           "s/20 passes: client time per 20 passes (the study's batch); CPU ms: server "
           "CPU (user + sys of the stack's whole process tree) per pass; DB CPU ms, "
           "statements by kind and log KB and lines are per pass; ↓ lower is better; "
           "×baseline: server CPU per pass ÷ the baseline stack's on the same target, "
           "logging and users.")
LOGGING_CAPTION = ("gain = (on − off) ÷ on, the share of the logging-on figure saved by "
                   "turning logging off (how the study's table 4 reads); cost = (on − off) "
                   "÷ off, what logging adds over the logging-off figure. The study gave "
                   "gains only: its costs here are derived, g ÷ (1 − g).")


def where(r: dict[str, Any]) -> str:
    """The database a case used, with its --db-rtt path when it had one: cases on
    different paths are different rows, each compared with its own path's baseline."""
    label = paths_label(r.get("params") or {})
    target = str(r.get("target"))
    return target if label is None else f"{target} ({label})"


def _key(r: dict[str, Any]) -> tuple[str, str, int]:
    return (where(r), str(r.get("stack")), int(r.get("params", {}).get("users", 1)))


def _logging(r: dict[str, Any]) -> str:
    return str(r.get("logging", (r.get("params") or {}).get("logging")))


def _both_ways(on: float | None, off: float | None) -> tuple[float | None, float | None]:
    """(gain from turning logging off in % of on, cost of logging in % of off)."""
    if not on or not off:
        return None, None
    return round((on - off) / on * 100, 1), round((on - off) / off * 100, 1)


def logging_effects(records: list[dict[str, Any]]
                    ) -> dict[tuple[str, str, int], dict[str, float | None]]:
    """Per (target, stack, users) with logging both on and off measured: client time and
    server CPU per pass each way, and the effect of logging both ways."""
    on: dict[tuple[str, str, int], dict[str, Any]] = {}
    off: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in records:
        if r.get("status") == "ok":
            (on if _logging(r) == "on" else off)[_key(r)] = r
    out = {}
    for key, r_on in on.items():
        r_off = off.get(key)
        if r_off is None:
            continue
        effect: dict[str, float | None] = {}
        for name, field in (("time", "ms_per_pass"), ("cpu", "app_cpu_ms_per_pass")):
            a, b = r_on.get(field), r_off.get(field)
            effect[f"{name}_on"], effect[f"{name}_off"] = a, b
            effect[f"gain_{name}_pct"], effect[f"cost_{name}_pct"] = _both_ways(a, b)
        out[key] = effect
    return out


def baseline_of(records: list[dict[str, Any]]) -> str:
    """The baseline stack the run named (`run parking --baseline`), else the study's."""
    for r in records:
        if r.get("baseline_stack"):
            return str(r["baseline_stack"])
    return DEFAULT_BASELINE


def _baseline_cpu(records: list[dict[str, Any]], baseline: str
                  ) -> dict[tuple[str, str, int], float]:
    """(target, logging, users) -> the baseline stack's server CPU per pass."""
    return {(where(r), _logging(r), int(r.get("params", {}).get("users", 1))):
            r["app_cpu_ms_per_pass"] for r in records
            if r.get("status") == "ok" and r.get("stack") == baseline
            and r.get("app_cpu_ms_per_pass")}


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per case: what every output format shows."""
    effects = logging_effects(records)
    baseline = baseline_of(records)
    reference = _baseline_cpu(records, baseline)
    out = []
    for r in records:
        params = r.get("params", {})
        logging = _logging(r)
        ms = r.get("ms_per_pass")
        cpu = r.get("app_cpu_ms_per_pass")
        base = reference.get((where(r), logging, int(params.get("users", 1))))
        row: dict[str, Any] = {
            "target": where(r), "target_kind": r.get("target_kind"),
            "stack": r.get("stack"), "logging": logging,
            "users": params.get("users"), "status": r.get("status"),
            "error": r.get("error", ""), "unstable": bool(r.get("unstable")),
            "passes_per_s": r.get("passes_per_s"), "ci95_pct": r.get("ci95_pct"),
            "ms_per_pass": ms,
            "client_s_per_20_passes": None if ms is None else round(ms * BATCH_PASSES / 1e3, 3),
            "app_cpu_ms_per_pass": cpu,
            "baseline_stack": baseline,
            "app_cpu_vs_baseline": round(cpu / base, 3) if cpu and base else None,
            "db_cpu_ms_per_pass": r.get("db_cpu_ms_per_pass"),
            "log_kb_per_pass": None if r.get("log_bytes_per_pass") is None
            else round(r["log_bytes_per_pass"] / 1024, 2),
            "log_lines_per_pass": r.get("log_lines_per_pass"),
        }
        statements = r.get("statements_per_pass") or {}
        counted = [statements.get(kind) for kind, _ in KINDS]
        for (kind, _), value in zip(KINDS, counted, strict=True):
            row[f"stmt_{kind}"] = value
        row["stmt_total"] = (round(sum(v for v in counted if v is not None), 3)
                             if statements else None)
        row["stmt_uncounted"] = ", ".join(sorted(r.get("statements_uncounted") or {}))
        effect = effects.get(_key(r), {}) if logging == "on" else {}
        for name in ("time", "cpu"):
            row[f"logging_gain_{name}_pct"] = effect.get(f"gain_{name}_pct")
            row[f"logging_cost_{name}_pct"] = effect.get(f"cost_{name}_pct")
        out.append(row)
    return out


def _stmt_cell(row: dict[str, Any], kind: str) -> str:
    value = row[f"stmt_{kind}"]
    if value is None:
        # a kind the database cannot count separately is empty (see the notes)
        return "" if kind in row["stmt_uncounted"].split(", ") else "–"
    return _num(value, 1)


def target_labels(data: list[dict[str, Any]]) -> dict[str, str]:
    """A short name per target: its kind where that is unique in the run, else the
    redacted URL."""
    kinds: dict[str, set[str]] = {}
    for r in data:
        kinds.setdefault(str(r.get("target_kind")), set()).add(str(r["target"]))
    return {str(r["target"]): (str(r.get("target_kind"))
                               if len(kinds[str(r.get("target_kind"))]) == 1
                               else str(r["target"])) for r in data}


def _cells(row: dict[str, Any], several_targets: bool) -> list[str]:
    head = ([str(row["target_label"])] if several_targets else []) + \
        [str(row["stack"]), str(row["logging"]), str(row["users"])]
    if row["status"] != "ok":
        return [*head, "FAILED", *[""] * (9 + len(KINDS))]
    flag = " UNSTABLE" if row["unstable"] else ""
    ratio = row["app_cpu_vs_baseline"]
    return [
        *head, _num(row["passes_per_s"], 2) + flag, f"±{_num(row['ci95_pct'], 1)}%",
        _num(row["client_s_per_20_passes"], 2), _num(row["app_cpu_ms_per_pass"], 1),
        "" if ratio is None else f"{ratio:.2f}×", _num(row["db_cpu_ms_per_pass"], 1),
        *(_stmt_cell(row, k) for k, _ in KINDS), _num(row["stmt_total"], 1),
        _num(row["log_kb_per_pass"], 1), _num(row["log_lines_per_pass"], 0)]


#: columns the terminal leaves out (every other format shows them)
WIDE_ONLY = ("±CI", "DELETE", "log lines")


#: the columns that say which case a row is (kept in every part of a folded table)
ROW_NAMES = ("target", "stack", "logging", "users")


def _headers(several_targets: bool) -> list[tuple[str, bool]]:
    return ([("target", False)] if several_targets else []) + [
        ("stack", False), ("logging", False), ("users", True), ("passes/s ↑", True),
        ("±CI", True), ("s/20 passes ↓", True), ("CPU ms ↓", True), ("×baseline", True),
        ("DB CPU ms ↓", True), *((title, True) for _, title in KINDS), ("total", True),
        ("log KB", True), ("log lines", True)]


def _study_rows(several_targets: bool) -> list[list[str]]:
    """The study's figures in the same columns: table 2 (statements), table 3 (log
    volume per pass), conclusion 1 (C++ server CPU about a third of CPython's)."""
    lead = [""] if several_targets else []
    out = []
    for label, counts, log, ratio in (
            ("CPython/PyPy + SQLAlchemy", STUDY_STATEMENTS["CPython/PyPy + SQLAlchemy"],
             STUDY_LOG["CPython + SQLAlchemy"], "1.00×"),
            ("C++ YB.ORM (SOCI, ODBC)", STUDY_STATEMENTS["C++ YB.ORM (SOCI, ODBC)"],
             STUDY_LOG["C++ YB.ORM + ODBC"], "≈0.33×")):
        mb, klines = log
        out.append([*lead, f"study: {label}", "on", "1", "", "", "", "", ratio, "",
                    *(str(counts[k]) for k, _ in KINDS), str(sum(counts.values())),
                    f"≈{mb * 1024 / 100:.0f}", f"≈{klines * 10:.0f}"])
    return out


def main_table(records: list[dict[str, Any]]) -> Table:
    data = rows(records)
    labels = target_labels(data)
    for row in data:
        row["target_label"] = labels[str(row["target"])]
    several = len(labels) > 1
    baseline = baseline_of(records)
    headers = _headers(several)
    cells = [_cells(r, several) for r in data]
    study = _study_rows(several)
    columns = [Column(f"c{i}", name, right, compact=name not in WIDE_ONLY,
                      names_row=name in ROW_NAMES)
               for i, (name, right) in enumerate(headers)]
    styles: list[str | None] = [
        ("failed" if row["status"] != "ok" else "unstable" if row["unstable"] else None)
        for row in data] + ["limit"] * len(study)
    return Table(f"parking: cost per suite pass (×baseline: server CPU ÷ {baseline}'s), "
                 "beside the study's tables 2 and 3", columns,
                 [{f"c{i}": cell for i, cell in enumerate(line)} for line in [*cells, *study]],
                 styles, CAPTION, anchor="parking")


def logging_table(records: list[dict[str, Any]]) -> Table | None:
    """Logging on vs off, both ways, beside the study's table 4."""
    effects = logging_effects(records)
    if not effects:
        return None
    labels = target_labels(rows(records))
    several = len({key[0] for key in effects}) > 1

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:.1f}%"

    headers = ([("target", False)] if several else []) + [
        ("stack", False), ("users", True),
        ("client ms/pass off / on", True), ("client: gain from off, % of on", True),
        ("client: cost of logging, % over off", True),
        ("server CPU ms/pass off / on", True), ("CPU: gain from off, % of on", True),
        ("CPU: cost of logging, % over off", True)]
    lines = []
    for (target, stack, users), e in effects.items():
        lines.append(([labels.get(target, target)] if several else []) + [
            stack, str(users), f"{_num(e['time_off'])} / {_num(e['time_on'])}",
            pct(e["gain_time_pct"]), pct(e["cost_time_pct"]),
            f"{_num(e['cpu_off'])} / {_num(e['cpu_on'])}", pct(e["gain_cpu_pct"]),
            pct(e["cost_cpu_pct"])])
    study = []
    for label, (time_gain, cpu_gain) in STUDY_LOGGING_GAIN.items():
        study.append(([""] if several else []) + [
            f"study table 4: {label}", "1", "", pct(time_gain),
            pct(round(time_gain / (100 - time_gain) * 100, 1)) + " (derived)", "",
            pct(cpu_gain), pct(round(cpu_gain / (100 - cpu_gain) * 100, 1)) + " (derived)"])
    columns = [Column(f"l{i}", name, right, names_row=name in ROW_NAMES)
               for i, (name, right) in enumerate(headers)]
    return Table("the effect of logging (on vs off), both ways", columns,
                 [{f"l{i}": cell for i, cell in enumerate(line)} for line in [*lines, *study]],
                 [None] * len(lines) + ["limit"] * len(study), LOGGING_CAPTION,
                 anchor="logging")


def function_table(records: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Per-function latency, p50 / p99 in ms, one column per measured case."""
    ok = [r for r in records if r.get("status") == "ok" and r.get("functions")]
    several = len({where(r) for r in ok}) > 1
    header = ["function", "calls/pass"] + [
        (f"{r.get('target_kind')} " if several else "") +
        f"{r['stack']} log {_logging(r)} u{r.get('users')}" for r in ok]
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
            lines.append(f"FAILED {r.get('stack')} logging {_logging(r)} "
                         f"users {r.get('params', {}).get('users')}: {r.get('error')}")
    ok = [r for r in records if r.get("status") == "ok"]
    sources = {(r.get("target_kind"), r.get("statements_source"), r.get("statements_note", ""))
               for r in ok}
    for kind, source, note in sorted(sources, key=str):
        lines.append(f"statements on {kind}: {source}" + (f" ({note})" if note else ""))
    folded = {(r.get("target_kind"), k, v) for r in ok
              for k, v in (r.get("statements_uncounted") or {}).items()}
    titles = dict(KINDS)
    for kind, what, into in sorted(folded):
        lines.append(f"{titles.get(what, what)} on {kind}: empty, not 0: the server counts "
                     f"these statements as {titles.get(into, into)} (included in that "
                     "column and in the total); compare the total with the study's")
    dbs = {(r.get("target_kind"), r.get("db_pid_source")) for r in ok}
    for kind, source in sorted(dbs, key=str):
        lines.append(f"DB CPU on {kind}: {source}")
    baseline = baseline_of(records)
    measured = {(where(r), _logging(r), int(r.get("params", {}).get("users", 1)))
                for r in ok}
    missing = measured - set(_baseline_cpu(records, baseline))
    if ok and missing:
        lines.append(f"×{baseline} is empty where the baseline stack {baseline} was not "
                     "measured with the same target, logging and users")
    if ok:
        lines.append("Rows named `study` are the seed's published figures: table 2 "
                     "(statements per pass), table 3 (log size per 100 passes ÷ 100, MB "
                     "read as MiB), conclusion 1 (C++ YB.ORM + ODBC used about a third of "
                     "CPython + SQLAlchemy's server CPU); its figures 1 and 2 (client time "
                     "per batch, server CPU) are images without numbers in the text. "
                     "Compare ratios within a run, never absolute times across machines.")
        lines.append("Each batch starts from re-seeded places (untimed); the conformance "
                     "suite passed before each case was measured.")
    lines += unstable_lines(ok, "the batches' 95% CI is wider than the target (--ci) where "
                            "the case stopped (--max-batches or the time cap; --load seed: "
                            "--batches)")
    return lines


def build(records: list[dict[str, Any]], title: str) -> Report:
    """The cross-language table (study rows last), logging both ways, per-function
    latency, footnotes."""
    data = rows(records)
    if len({str(r["target"]) for r in data}) == 1 and data:
        title += f" on {data[0]['target']}"
    blocks: list[Any] = [main_table(records)]
    logging = logging_table(records)
    if logging is not None:
        blocks.append(logging)
    head, body = function_table(records)
    if body and len(head) > 2:
        blocks.append(Table("latency per function: p50 / p99 in ms (↓ lower is better)",
                            [Column(f"f{i}", name, i > 0) for i, name in enumerate(head)],
                            [{f"f{i}": cell for i, cell in enumerate(line)} for line in body],
                            anchor="functions"))
    ok = [r for r in data if r["status"] == "ok" and r.get("passes_per_s")]
    if ok:
        groups = list(dict.fromkeys(r["logging"] for r in ok))
        blocks.insert(0, BarChart(
            "Suite passes per second", "passes per second (higher is better)",
            [(f"logging {log}", [Bar(f"{r['stack']} ×{r['users']}", r["passes_per_s"])
                                 for r in ok if r["logging"] == log]) for log in groups],
            anchor="chart-passes", table_anchor="parking",
            note="Bars: mean passes per second over the counted batches."))
        blocks.insert(1, BarChart(
            "Server CPU per pass", "ms of CPU per pass, the stack's process tree (lower is "
            "better)",
            [(f"logging {log}", [Bar(f"{r['stack']} ×{r['users']}", r["app_cpu_ms_per_pass"])
                                 for r in ok if r["logging"] == log
                                 and r["app_cpu_ms_per_pass"] is not None])
             for log in groups],
            anchor="chart-cpu", table_anchor="parking",
            note="Bars: user + sys CPU of the server stack's whole process tree per pass."))
    return Report(title, [Section("", blocks)],
                  notes=footnotes(records) + path_lines(records, per="pass"),
                  data=data, data_columns=list(data[0]) if data else ["stack"],
                  extra={"study_statements_per_pass": STUDY_STATEMENTS,
                         "study_log_mb_klines_per_100_passes": STUDY_LOG,
                         "study_logging_gain_pct_time_cpu": STUDY_LOGGING_GAIN,
                         "baseline_stack": baseline_of(records),
                         "latency_ms_p50_p99": {"columns": head, "rows": body}},
                  measurements=measurements(records))


def measurements(records: list[dict[str, Any]]) -> list[Measurement]:
    """Per case: passes/s, with seconds per pass (one per batch) as the samples."""
    return [measurement(r, f"parking {r.get('stack')} logging {_logging(r)} "
                           f"users {(r.get('params') or {}).get('users')} on "
                           f"{r.get('target_kind')}", "passes/s", r.get("passes_per_s"),
                        operation="suite pass")
            for r in records]
