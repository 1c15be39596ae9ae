"""kv on real SQLite files, through the CLI as a user runs it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from dbstand.modes.pinning import ALONE
from dbstand.workloads.kv.workload import OPS

FAST = ["--revs", "300", "--rows", "500", "--min-iterations", "3", "--max-iterations", "5",
        "--ci", "50"]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_op_runs_and_records_the_schema(cli, tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", f"sqlite:///{db}", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = records(out)
    assert recs[0]["type"] == "run" and recs[-1]["type"] == "run_end"
    assert recs[-1]["status"] == "complete"
    cases = [r for r in recs if r["type"] == "case"]
    assert [c["op"] for c in cases] == list(OPS)
    for c in cases:
        assert c["status"] == "ok"
        for key in ("schema", "run_id", "workload", "stack", "target", "mode", "op", "params",
                    "ops_per_s", "ci95_pct", "iterations", "unstable", "latency_us",
                    "harness_overhead_ns", "environment"):
            assert key in c, key
        assert c["ops_per_s"] > 0 and 3 <= c["iterations"] <= 5
        assert set(c["latency_us"]) >= {"p50", "p90", "p99", "p999", "max"}
        env = c["environment"]
        assert env["cpu_logical"] >= 1 and env["python"].startswith("CPython")
        assert env["server"]["version"] == sqlite3.sqlite_version
        assert env["packages"] == {"sqlite3": "builtin"}
        # embedded: no server to place the client beside, so the client is not pinned
        assert env["server"]["cpu_pinning"] == {"enabled": False, "reason": ALONE}
        # the table was loaded by the kind's bulk path, its rate recorded
        load = c["data_load"]
        assert load["rows"] == 500 and load["rows_per_s"] > 0
        assert load["path"] == "executemany in one transaction"
    assert str(out) in res.stdout
    # the table was dropped afterwards, and the registry with it: nothing left behind
    tables = sqlite3.connect(db).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == []


def test_keep_leaves_the_table_restored(cli, tmp_path: Path) -> None:
    db = tmp_path / "keep.db"
    res = cli("run", "kv", "--target", f"sqlite:///{db}", "--op", "insert,delete,update",
              "--keep", "-o", str(tmp_path / "r.jsonl"), *FAST)
    assert res.code == 0, res.stderr
    conn = sqlite3.connect(db)
    # after the last case (update) the table holds exactly the initial rows
    assert conn.execute("SELECT count(*), min(id), max(id) FROM dbstand_kv").fetchone() == \
        (500, 1, 500)
    owned = conn.execute("SELECT name, workload FROM dbstand_owned").fetchall()
    assert owned == [("dbstand_kv", "kv")]


def test_report_formats(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert cli("run", "kv", "--op", "select,update", "-o", str(out), *FAST).code == 0
    md = cli("report", str(out), "--format", "markdown")
    assert md.code == 0 and "| sqlite3 |" in md.stdout and "ops/s ↑" in md.stdout
    assert "↑ higher is better" in md.stdout
    csv = cli("report", str(out), "--format", "csv")
    lines = csv.stdout.strip().splitlines()
    assert lines[0].startswith("stack,target,mode,") and ",ops_per_s," in lines[0]
    assert len(lines) == 3
    js = json.loads(cli("report", str(out), "--format", "json").stdout)
    assert js["complete"] is True and [r["op"] for r in js["rows"]] == ["select", "update"]
    html = tmp_path / "r.html"
    assert cli("report", str(out), "--format", "html", "-o", str(html)).code == 0
    text = html.read_text()
    assert "<svg" in text and "select" in text and "<script" not in text
    table = cli("report", str(out))
    assert table.code == 0 and "select" in table.stdout and "ops/s" in table.stdout


def test_study_stop_rule_is_recorded(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--op", "select", "--stop-rule", "study", "-o", str(out),
              "--revs", "300", "--rows", "500", "--max-iterations", "40")
    assert res.code == 0, res.stderr
    case = records(out)[1]
    assert case["stop_rule"] == "study"
    assert case["iterations"] == 5 or case["unstable"]
