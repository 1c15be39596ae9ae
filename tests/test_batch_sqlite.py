"""batch on real SQLite files: every api and op, verification, reports, ownership."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

from batch_fixtures import FAST, by_key, case_records

ROWS = ["--rows", "200,400,800", "--large-rows", "800"]


def test_every_api_every_op(cli, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{db}", "-o", str(out), *ROWS, *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    got = by_key(recs)
    for api in ("executemany", "values", "limit:server-side"):
        stack = "limit" if api.startswith("limit:") else "sqlite3"
        for op in ("insert", "update", "delete"):
            for rows in (200, 400, 800):
                r = got[(stack, api, op, rows)]
                assert r["status"] == "ok", r.get("error")
                assert r["seconds"] > 0 and r["rows_per_s"] > 0
                assert r["rows_per_s"] == round(rows / r["seconds"], 1)
    assert len(recs) == 27
    # 800 rows is "large" here: a fixed repetition with its spread, flagged unstable
    # exactly when its interval is wider than the target (--ci 50), as the rule would
    large = got[("sqlite3", "values", "insert", 800)]
    assert large["repetition"] == "fixed:3" and large["iterations"] == 3
    assert large["stop_reason"] == "fixed-repetitions"
    assert large["unstable"] == (large["ci95_pct"] > 50)
    assert large["seconds_min"] <= large["seconds"] <= large["seconds_max"]
    small = got[("sqlite3", "values", "insert", 200)]
    assert small["repetition"] == "stop-rule"
    assert small["harness_overhead_ns"] is not None  # kept in the record
    # the terminal: one table per op with the scaling verdict and the limit row
    for text in ("batch insert on sqlite:///", "batch update", "batch delete",
                 "scaling", "limit", "server-side", "ranking at 800 rows", "rows/s"):
        assert text in res.stdout, text
    # the table is gone, and so is dbstand's registry of owned tables
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "dbstand_batch" not in names and "dbstand_owned" not in names


def test_report_formats(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{tmp_path}/b.db", "--api", "values",
              "--op", "insert,delete", "--rows", "100,200", "--no-limit", "-o", str(out),
              *FAST)
    assert res.code == 0, res.stderr
    md = cli("report", str(out), "-f", "markdown")
    assert md.code == 0, md.stderr
    assert "batch insert on sqlite:///" in md.stdout and "rows/s (higher is better)" in md.stdout
    assert "| 1 | sqlite3 | values |" in md.stdout
    rows = list(csv.DictReader(io.StringIO(cli("report", str(out), "-f", "csv").stdout)))
    assert {(r["api"], r["op"], r["rows"]) for r in rows} == {
        ("values", op, n) for op in ("insert", "delete") for n in ("100", "200")}
    assert all(float(r["seconds"]) > 0 and r["scaling"] for r in rows)
    payload = json.loads(cli("report", str(out), "-f", "json").stdout)
    assert payload["ranking"]["insert " + payload["rows"][0]["target"]]["fastest_first"] == \
        ["sqlite3 values"]
    assert {s["op"] for s in payload["scaling"]} == {"insert", "delete"}
    assert all(s["sizes"] == 2 and not s["confident"] for s in payload["scaling"])
    html = tmp_path / "r.html"
    assert cli("report", str(out), "-f", "html", "-o", str(html)).code == 0
    page = html.read_text()
    assert "seconds per batch, COMMIT included" in page and "rows/s" in page
    assert page.count("<svg") == 1 and "<script" not in page


def test_someone_elses_table_is_refused(cli, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE dbstand_batch (f_key TEXT, secret TEXT)")
        conn.execute("INSERT INTO dbstand_batch VALUES ('1', 'keep me')")
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{db}", "--rows", "10", "-o", str(out))
    assert res.code == 2 and "dbstand_batch exists and was not created by dbstand" in res.stderr
    assert not out.exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM dbstand_batch").fetchall() == [("1", "keep me")]
