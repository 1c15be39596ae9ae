"""The parking report from results records (a pure function of the records): the
cross-language table, server CPU against the baseline stack, logging both ways,
statement kinds a database cannot count separately; default stacks by target kind."""

from __future__ import annotations

from typing import Any

import pytest

from dbstand.errors import UserError
from dbstand.report.renderers import renderer
from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking import report
from dbstand.workloads.parking.workload import ParkingOptions, build_cases, parking_stacks


def record(stack: str, logging: str, ms: float, cpu: float, *, kind: str = "mysql",
           baseline: str | None = None) -> dict[str, Any]:
    stmts: dict[str, float | None] = {"select": 100.0, "select_for_update": None,
                                      "update": 30.0, "insert": 24.0, "delete": 0.0,
                                      "other": 130.0}
    if kind == "postgresql":
        stmts["select"], stmts["select_for_update"] = 50.0, 50.0
    out = {"type": "case", "status": "ok", "stack": stack, "logging": logging,
           "target": f"{kind}://x@127.0.0.1:1/db", "target_kind": kind,
           "params": {"users": 1, "logging": logging, "passes": 20, "batches": 3},
           "passes_per_s": 1000 / ms, "ci95_pct": 1.0, "ms_per_pass": ms,
           "app_cpu_ms_per_pass": cpu, "db_cpu_ms_per_pass": 10.0,
           "log_bytes_per_pass": 2048.0 if logging == "on" else 0.0,
           "log_lines_per_pass": 20.0 if logging == "on" else 0.0,
           "statements_per_pass": stmts, "statements_source": "counter",
           "iterations": 3, "revs": 20}
    if kind == "mysql":
        out["statements_uncounted"] = {"select_for_update": "select"}
    if baseline:
        out["baseline_stack"] = baseline
    return out


def test_baseline_ratio_and_logging_both_ways() -> None:
    records = [record("python-sqlalchemy", "on", 125.0, 100.0),
               record("python-sqlalchemy", "off", 100.0, 80.0),
               record("go-parking-gorm", "on", 50.0, 25.0),
               record("go-parking-gorm", "off", 40.0, 20.0)]
    rows = {(r["stack"], r["logging"]): r for r in report.rows(records)}
    sa_on = rows["python-sqlalchemy", "on"]
    assert sa_on["app_cpu_vs_baseline"] == 1.0
    assert rows["go-parking-gorm", "on"]["app_cpu_vs_baseline"] == 0.25
    assert rows["go-parking-gorm", "off"]["app_cpu_vs_baseline"] == 0.25
    assert sa_on["client_s_per_20_passes"] == 2.5
    # the gain from turning logging off, as a share of the on figure (study table 4),
    # and the cost of logging over the off figure
    assert sa_on["logging_gain_time_pct"] == 20.0 and sa_on["logging_cost_time_pct"] == 25.0
    assert sa_on["logging_gain_cpu_pct"] == 20.0 and sa_on["logging_cost_cpu_pct"] == 25.0
    assert rows["python-sqlalchemy", "off"]["logging_gain_time_pct"] is None
    # MariaDB cannot tell FOR UPDATE apart: empty, never 0, and a note says so
    assert sa_on["stmt_select_for_update"] is None and sa_on["stmt_total"] == 154.0
    built = report.build(records, "t")
    main = built.tables()[0]
    for_update = next(c.key for c in main.columns if c.title == "FOR UPD")
    assert main.rows[0][for_update] == ""
    assert any("FOR UPD on mysql: empty, not 0" in n for n in built.notes)
    text = renderer("markdown")(built)
    for expected in ("gain from off, % of on", "cost of logging, % over off",
                     "study table 4: CPython + SQLAlchemy", "26.0%", "35.1% (derived)",
                     "0.25×", "python-sqlalchemy's", "238", "264"):
        assert expected in text, expected


def test_another_baseline_and_a_missing_one() -> None:
    records = [record("python-raw", "off", 50.0, 30.0, kind="postgresql",
                      baseline="python-raw"),
               record("python-peewee", "off", 80.0, 60.0, kind="postgresql",
                      baseline="python-raw")]
    rows = {r["stack"]: r for r in report.rows(records)}
    assert rows["python-peewee"]["app_cpu_vs_baseline"] == 2.0
    assert rows["python-peewee"]["stmt_select_for_update"] == 50.0
    alone = report.build(records[1:2], "t")
    assert any("python-raw was not measured" in n for n in alone.notes)


def test_default_stacks_follow_the_target_kind() -> None:
    options = ParkingOptions(passes=1, batches=2)
    sqlite = parse_target_url("sqlite:////tmp/x.db")
    mysql = parse_target_url("mysql://u@127.0.0.1:3306/db")
    on_sqlite = {c.stack for c in build_cases([sqlite], None, ["off"], [1], options)}
    assert on_sqlite == set(parking_stacks("sqlite"))
    assert {"python-raw", "python-sqlalchemy", "python-peewee"} <= on_sqlite
    assert "go-parking-sql" not in on_sqlite  # its manifest: mysql, postgresql
    both = build_cases([sqlite, mysql], None, ["off"], [1], options)
    assert {c.stack for c in both if c.target.kind == "mysql"} == set(parking_stacks("mysql"))
    assert "go-parking-sql" in parking_stacks("mysql")
    with pytest.raises(UserError, match="does not run on sqlite"):
        build_cases([sqlite, mysql], ["go-parking-sql"], ["off"], [1], options)
