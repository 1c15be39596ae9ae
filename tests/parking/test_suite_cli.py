"""`dbstand verify parking` and `dbstand run parking` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking.app import running_service


def test_verify_exit_codes(cli, tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'p.db'}"
    ok = cli("verify", "parking", "--stack", "python-raw", "--target", target)
    assert ok.code == 0, ok.stderr
    for scenario in ("prepaid", "postpaid", "refunds", "transfers", "versions"):
        assert scenario in ok.stdout
    assert "conforms" in ok.stdout
    bad = cli("verify", "parking", "--stack", "python-raw", "--target", target,
              "--broken", "no-idempotent-replay")
    assert bad.code == 1
    assert "FAIL" in bad.stdout and "idempotent replay" in bad.stdout
    # every deliberate fault is a --broken choice, the misspelled refusals too
    misspelled = cli("verify", "parking", "--stack", "python-raw", "--target", target,
                     "--broken", "reason-in-status", "--prefix", "dbs_bad_")
    assert misspelled.code == 1 and "status='invalid_user_id'" in misspelled.stdout
    wrong = cli("verify", "parking", "--stack", "python-raw", "--broken", "everything")
    assert wrong.code == 2 and "stray-status-code" in wrong.stderr
    unknown = cli("verify", "parking", "--stack", "cobol", "--target", target)
    assert unknown.code == 2 and "unknown parking stack" in unknown.stderr
    nothing = cli("verify", "parking", "--url", "http://127.0.0.1:9")
    assert nothing.code == 2 and "nothing answers" in nothing.stderr


def test_verify_a_running_url(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    with running_service("python-sqlalchemy", parse_target_url(url),
                         prefix="dbs_url_") as service:
        result = cli("verify", "parking", "--url", service.base_url, "--passes", "2")
        # with its database, the totals the passes must leave are checked too
        totals = cli("verify", "parking", "--url", service.base_url, "--target", url,
                     "--prefix", "dbs_url_")
        elsewhere = cli("verify", "parking", "--url", service.base_url, "--target", url,
                        "--prefix", "dbs_none_")
    assert result.code == 0, result.stdout + result.stderr
    assert "2/2" in result.stdout and "totals: not checked" in result.stdout
    assert totals.code == 0, totals.stdout + totals.stderr
    assert "totals: PASS" in totals.stdout
    assert elsewhere.code == 2 and "dbs_none_t_" in elsewhere.stderr


def test_run_parking_end_to_end(cli, tmp_path: Path, mariadb_url: str) -> None:
    out = tmp_path / "r.jsonl"
    result = cli("run", "parking", "--stack", "python-raw,python-peewee", "--target",
                 mariadb_url, "--logging", "on,off", "--users", "1", "--passes", "2",
                 "--batches", "2", "--load", "seed", "--baseline", "python-raw", "-o", str(out))
    assert result.code == 0, result.stdout + result.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    cases = [r for r in records if r["type"] == "case"]
    assert len(cases) == 4 and all(c["status"] == "ok" for c in cases)
    for case in cases:
        assert case["conformance"]["passed"] and case["calls_per_pass"] == 68
        assert case["ops_per_s"] == pytest.approx(case["passes_per_s"], abs=0.1)
        assert case["passes_per_s"] > 0
        assert case["iterations"] == 2 and case["revs"] == 2 * case["users"]
        assert case["app_cpu_ms_per_pass"] > 0 and case["db_cpu_ms_per_pass"] > 0
        stmts = case["statements_per_pass"]
        assert stmts["insert"] > 0 and stmts["update"] > 0 and stmts["select"] > 0
        # MariaDB's Com_select counts SELECT ... FOR UPDATE as a select: empty, not 0
        assert stmts["select_for_update"] is None
        assert case["statements_uncounted"] == {"select_for_update": "select"}
        assert case["baseline_stack"] == "python-raw"
        assert set(case["functions"]) == {
            "get_service_info", "create_reservation", "pay_reservation", "get_user_account",
            "stop_service", "account_transfer", "cancel_reservation", "check_plate_number",
            "leave_parking", "issue_ticket"}
        calls = case["functions"]["get_service_info"]["calls"]
        assert calls == 22 * case["revs"] * case["iterations"]
        assert case["functions"]["issue_ticket"]["p99_us"] > 0
        if case["logging"] == "on":
            assert case["log_bytes_per_pass"] > 0 and case["log_lines_per_pass"] > 0
        else:
            assert case["log_bytes_per_pass"] == 0
    assert "×baseline" in result.stdout and "the effect of logging" in result.stdout
    # each implementation issues its own statements (raw SQL is not Peewee's)
    total = {c["stack"]: sum(c["statements_per_pass"][k] for k in ("select", "update",
                                                                    "insert", "delete"))
             for c in cases if c["logging"] == "off"}
    assert total["python-raw"] != total["python-peewee"], total
    report = cli("report", str(out), "--format", "markdown")
    assert report.code == 0 and "get_service_info" in report.stdout
    for text in ("gain from off, % of on", "cost of logging, % over off",
                 "study table 4: CPython + SQLAlchemy", "study: CPython/PyPy + SQLAlchemy",
                 "FOR UPD on mysql: empty, not 0",
                 "python-raw's"):  # the baseline the run named
        assert text in report.stdout, text


def test_run_parking_concurrent_users(cli, tmp_path: Path, pg_url: str) -> None:
    out = tmp_path / "r.jsonl"
    result = cli("run", "parking", "--stack", "python-sqlalchemy", "--target", pg_url,
                 "--users", "3", "--passes", "2", "--batches", "2", "--load", "seed",
                 "-o", str(out))
    assert result.code == 0, result.stdout + result.stderr
    (case,) = [json.loads(line) for line in out.read_text().splitlines()
               if json.loads(line)["type"] == "case"]
    assert case["status"] == "ok" and case["mode"] == "threads:3" and case["revs"] == 6
    assert case["statements_per_pass"]["select_for_update"] > 0
    assert case["functions"]["pay_reservation"]["calls"] == 8 * 6 * 2


def test_run_parking_user_mistakes(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    for args, text in ((["--stack", "nope"], "unknown parking stack"),
                       (["--stack", "go-parking-sql"], "does not run on sqlite"),
                       (["--baseline", "nope"], "--baseline"),
                       (["--logging", "maybe"], "--logging"),
                       (["--batches", "1"], "--batches"),
                       (["--users", "0"], "--users"),
                       (["--target", "sqlite://"], "in-memory")):
        result = cli("run", "parking", *args, "-o", str(out))
        assert result.code == 2, (args, result.stderr)
        assert text in result.stderr
        assert not out.exists()
