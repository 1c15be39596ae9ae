"""The studies' checks on records as `dbstand run` writes them (no run here): the
defects issue 23 named, each with a case on both sides."""

from __future__ import annotations

from typing import Any

from dbstand.studies import get_study
from dbstand.studies.base import placement_of
from dbstand.studies.claims import Judged, settle
from dbstand.studies.verdict import DIFFERS, INCONCLUSIVE, REPRODUCED


def claim(study: Any, claim_id: str) -> dict[str, Any]:
    return next(c for c in study.data["claims"] if c["id"] == claim_id)


# --- parking ------------------------------------------------------------------------------
def parking_record(stack: str, logging: str = "on", **extra: Any) -> dict[str, Any]:
    per = {"select": 100.0, "select_for_update": None, "update": 30.0, "insert": 24.0,
           "delete": 0.0, "other": 50.0}
    return {"status": "ok", "stack": stack, "logging": logging, "params": {"users": 1},
            "ms_per_pass": 100.0, "ci95_pct": 2.0, "unstable": True,
            "app_cpu_ms_per_pass": 50.0, "app_cpu_ci95_pct": 3.0,
            "log_bytes_per_pass": 1000.0, "log_bytes_ci95_pct": 1.0,
            "statements_per_pass": per, "statements_uncounted": {"select_for_update": "select"},
            **extra}


def test_parking_table2_totals_the_seeds_five_kinds() -> None:
    study: Any = get_study("parking")
    table = study._statements([parking_record("python-sqlalchemy")])
    total = table.rows[-1]
    assert total["kind"].startswith("TOTAL") and total["python-sqlalchemy"] == "154"  # no "other"
    select = table.rows[0]
    assert select["python-sqlalchemy"] == "100 (with SELECT FOR UPDATE)"


def test_parking_plain_select_inconclusive_where_the_counter_folds_for_update() -> None:
    study: Any = get_study("parking")
    c = claim(study, "orm-selects")
    folded = [parking_record("python-sqlalchemy"),
              parking_record("cpp-parking-soci-orm-odbc",
                             statements_per_pass={"select": 140.0, "select_for_update": None})]
    got = study.check_statements(folded, c)
    assert isinstance(got, Judged) and got.verdict == INCONCLUSIVE
    assert "cannot be told apart" in got.reason
    # a counter that tells them apart (PostgreSQL's statements): an exact count ratio
    apart = [parking_record(s, statements_uncounted={},
                            statements_per_pass={"select": n, "select_for_update": 88.0})
             for s, n in (("python-sqlalchemy", 78.0), ("cpp-parking-soci-orm-odbc", 106.0))]
    assert settle(c, study.check_statements(apart, c)).verdict == REPRODUCED
    fewer = [parking_record(s, statements_uncounted={},
                            statements_per_pass={"select": n, "select_for_update": 88.0})
             for s, n in (("python-sqlalchemy", 120.0), ("cpp-parking-soci-orm-odbc", 106.0))]
    assert settle(c, study.check_statements(fewer, c)).verdict == DIFFERS


def test_parking_unstable_tag_on_timings_only() -> None:
    study: Any = get_study("parking")
    rec = parking_record("python-sqlalchemy")
    assert study._estimate(rec, "ms_per_pass").shaky
    assert not study._estimate(rec, "app_cpu_ms_per_pass").shaky
    assert not study._estimate(rec, "log_bytes_per_pass").shaky
    assert study._estimate(rec, "app_cpu_ms_per_pass").ci_pct == 3.0


def test_parking_pypy_claim_is_measured() -> None:
    study: Any = get_study("parking")
    c = claim(study, "pypy-no-gain")
    assert "pypy-sqlalchemy" in study.stand_in(c)
    slow = [parking_record("python-sqlalchemy", ms_per_pass=100.0),
            parking_record("pypy-sqlalchemy", ms_per_pass=95.0)]
    assert settle(c, study.check_ratio(slow, c)).verdict == REPRODUCED
    fast = [parking_record("python-sqlalchemy", ms_per_pass=100.0),
            parking_record("pypy-sqlalchemy", ms_per_pass=40.0)]
    assert settle(c, study.check_ratio(fast, c)).verdict == DIFFERS


def test_parking_logging_gain_has_an_interval() -> None:
    study: Any = get_study("parking")
    c = claim(study, "logging-cost-python")    # between 5% and 45%
    recs = [parking_record("python-sqlalchemy", "on", app_cpu_ms_per_pass=100.0),
            parking_record("python-sqlalchemy", "off", app_cpu_ms_per_pass=75.0)]
    got = study.check_logging_gain(recs, c)
    assert isinstance(got, list)
    gain = got[0][1]
    assert gain.value == 25.0 and gain.low < 25.0 < gain.high
    assert settle(c, got).verdict == REPRODUCED
    noisy = [parking_record("python-sqlalchemy", "on", app_cpu_ms_per_pass=100.0,
                            app_cpu_ci95_pct=30.0),
             parking_record("python-sqlalchemy", "off", app_cpu_ms_per_pass=75.0)]
    assert settle(c, study.check_logging_gain(noisy, c)).verdict == INCONCLUSIVE


# --- kv: no ratio across CPU placements ------------------------------------------------------
def kv_record(stack: str, mode: str, ops: float, pin: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "stack": stack, "mode": mode, "op": "select", "ops_per_s": ops,
            "ci95_pct": 1.0, "params": {"protocol": "binary"},
            "environment": {"server": {"cpu_pinning": pin}}}


def test_kv_refuses_a_ratio_across_placements() -> None:
    study: Any = get_study("kv")
    c = claim(study, "coroutines-3x")
    shared = {"enabled": True, "placement": "shared", "client_cpus": [0], "server_cpus": [0]}
    split = {"enabled": True, "placement": "separate", "client_cpus": [0], "server_cpus": [1]}
    across = [kv_record("asynctnt", "asyncio:25", 90_000, split),
              kv_record("asynctnt", "asyncio:1", 20_000, shared)]
    row = settle(c, study.check_ratio(across, c))
    assert row.verdict == INCONCLUSIVE and "different CPU placements" in row.reason
    same = [kv_record("asynctnt", "asyncio:25", 90_000, split),
            kv_record("asynctnt", "asyncio:1", 20_000, split)]
    assert settle(c, study.check_ratio(same, c)).verdict == REPRODUCED
    assert placement_of(same[0]) != placement_of(across[1])
    assert placement_of({"placement": {"enabled": False}}) == "unpinned"


def test_kv_sweep_optimum_by_the_rule() -> None:
    study: Any = get_study("kv")
    c = claim(study, "coroutine-optimum-25")
    pin = {"enabled": True, "placement": "separate", "client_cpus": [0], "server_cpus": [1]}

    def sweep(figures: dict[int, float]) -> list[dict[str, Any]]:
        return [{**kv_record("asynctnt", f"asyncio:{n}", ops, pin), "params":
                 {"protocol": "binary", "loop": "asyncio"}} for n, ops in figures.items()]

    best = study.check_sweep(sweep({10: 80_000, 25: 100_000, 50: 90_000}), c)
    assert isinstance(best, Judged) and best.verdict == REPRODUCED
    plateau = study.check_sweep(sweep({10: 80_000, 25: 100_000, 50: 99_500}), c)
    assert isinstance(plateau, Judged) and plateau.verdict == INCONCLUSIVE
    beaten = study.check_sweep(sweep({10: 80_000, 25: 100_000, 50: 120_000}), c)
    assert isinstance(beaten, Judged) and beaten.verdict == DIFFERS


# --- webtech ---------------------------------------------------------------------------------
def web_record(stack: str, test: str, ops: float, clients: int = 1) -> dict[str, Any]:
    return {"status": "ok", "stack": stack, "op": test, "mode": f"clients:{clients}",
            "ops_per_s": ops, "ci95_pct": 2.0}


def test_webtech_leaves_the_seeds_blank_cells_blank() -> None:
    study: Any = get_study("webtech")
    recs = [web_record("php-apache-modphp", "hello", 3000),
            web_record("php-apache-modphp", "file", 9000)]
    table = study._table(recs, study.data["tables"][0], "Mod_php/Apache")
    php = next(r for r in table.rows if r["tech"] == "Mod_php/Apache")
    assert php["servlet"] == "- | -" and php["hello"].startswith("291 (1.00x) | 3,000")


def test_webtech_leads_and_last() -> None:
    study: Any = get_study("webtech")
    c = claim(study, "asp-big-last")
    rivals = ["java-jetty-servlet", "java-apache-tomcat-ajp", "perl-apache-modperl",
              "php-apache-modphp", "javascript-node-http"]
    last = [web_record("csharp-mono-webforms", "big", 100),
            *(web_record(s, "big", 200 + i) for i, s in enumerate(rivals))]
    got = study.check_leads(last, c)
    assert isinstance(got, Judged) and got.verdict == REPRODUCED
    middle = [*last[:-1], web_record("javascript-node-http", "big", 50)]
    got = study.check_leads(middle, c)
    assert isinstance(got, Judged) and got.verdict == DIFFERS
    partial = study.check_leads(last[:-1], c)    # node not measured: not shown last
    assert isinstance(partial, Judged) and partial.verdict == INCONCLUSIVE
    assert "javascript-node-http not measured" in partial.reason
    assert study.check_leads([], c) == []


# --- batch -----------------------------------------------------------------------------------
def test_batch_growth_exponent_has_an_interval() -> None:
    from dbstand.workloads.batch.report import Line

    study: Any = get_study("batch")
    line = Line("t", "psycopg2", "prepare+execute_batch", "delete", False)
    line.cells = {1000: {"status": "ok", "seconds": 0.1, "ci95_pct": 2.0},
                  10000: {"status": "ok", "seconds": 1.0, "ci95_pct": 2.0}}
    label, exp = study.exponent(line)
    assert "1,000-10,000" in label and abs(exp.value - 1.0) < 1e-9
    assert exp.low < 1.0 < exp.high
    c = claim(study, "prepared-delete-linear")
    assert settle(c, [(label, exp)]).verdict == REPRODUCED
    # sublinear (fixed costs) is not linear
    line.cells[10000] = {"status": "ok", "seconds": 0.3, "ci95_pct": 2.0}
    assert settle(c, [study.exponent(line)]).verdict == DIFFERS


def test_parking_window_interval() -> None:
    from dbstand.workloads.parking.workload import window_ci

    assert window_ci([1.0]) is None and window_ci([0.0, 0.0]) is None   # no interval
    assert window_ci([2.0, 2.0, 2.0]) == 0.0
    spread = window_ci([1.0, 1.2, 0.8, 1.1, 0.9])
    assert spread == 19.63   # t(4) 2.776 x stdev 0.158 / sqrt(5) / mean 1


def test_parking_function_shares_by_the_ordering_rule() -> None:
    study: Any = get_study("parking")
    c = claim(study, "function-time-shares")

    def rec(create: float, pay: float, stop: float) -> list[dict[str, Any]]:
        funcs = {name: {"calls": 1, "share_pct": share, "share_ci95_pct": 5.0}
                 for name, share in (("create_reservation", create),
                                     ("pay_reservation", pay), ("stop_service", stop),
                                     ("get_service_info", 9.0))}
        return [parking_record("cpp-parking-soci-orm", functions=funcs)]

    got = study.check_shares(rec(27.0, 19.0, 14.0), c)
    assert isinstance(got, Judged) and got.verdict == REPRODUCED
    close = study.check_shares(rec(27.0, 19.0, 18.5), c)     # stop_service within noise
    assert isinstance(close, Judged) and close.verdict == INCONCLUSIVE
    swapped = study.check_shares(rec(15.0, 25.0, 10.0), c)
    assert isinstance(swapped, Judged) and swapped.verdict == DIFFERS
    old = [parking_record("cpp-parking-soci-orm", functions={"create_reservation": {}})]
    assert isinstance(study.check_shares(old, c), str)


def test_parking_batch_shares() -> None:
    from dbstand.workloads.parking.workload import batch_shares

    shares = batch_shares([{"create_reservation": 300, "pay_reservation": 100},
                           {"create_reservation": 200, "pay_reservation": 200}, {}],
                          ["create_reservation", "pay_reservation", "issue_ticket"])
    assert shares == {"create_reservation": [75.0, 50.0], "pay_reservation": [25.0, 50.0],
                      "issue_ticket": [0.0, 0.0]}   # an empty batch has no shares
