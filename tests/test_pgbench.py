"""The limit row: pgbench on the same dbstand-owned table, beside the Python stacks."""

from __future__ import annotations

import json
from pathlib import Path

from dbstand.targets.managed import ServerRecord
from dbstand.targets.postgresql.pgbench import parse_summary, read_latencies

FAST = ["--revs", "200", "--rows", "300", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_pgbench_beside_psycopg(cli, pg: ServerRecord, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg,pgbench",
              "--op", "select,update", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    limit = [r for r in recs if r["stack"] == "pgbench"]
    assert {(r["params"]["protocol"], r["op"]) for r in limit} == {
        ("simple", "select"), ("simple", "update"), ("prepared", "select"),
        ("prepared", "update")}
    for r in limit:
        assert r["limit"] is True and r["ops_per_s"] > 0
        assert r["iterations"] >= 3 and r["latency_us"]["p50"] > 0
        assert r["client"].startswith("pgbench (PostgreSQL)")
        assert f"-M {r['params']['protocol']}" in r["client"]
        p = r["probes"]
        assert p["statements_per_op"][r["op"]] == 1.0
        assert sum(p["statements_per_op"].values()) == 1.0
        assert p["client_cpu_s"] > 0 and 0 < p["server_cpu_s"] < p["window_s"] * p["cores"]
    assert not any(r.get("limit") for r in recs if r["stack"] == "psycopg")
    assert "LIMIT" in res.stdout and "pgbench[prepared]" in res.stdout
    # the password went through a 0600 password file only: never in output or results
    assert pg.password not in out.read_text() + res.stdout + res.stderr


def test_pgbench_output_parsing(tmp_path: Path) -> None:
    text = ("number of transactions actually processed: 200/200\n"
            "number of failed transactions: 0 (0.000%)\nlatency average = 0.081 ms\n"
            "initial connection time = 3.052 ms\n"
            "tps = 12345.678000 (without initial connection time)\n")
    assert parse_summary(text) == {"processed": 200, "failed": 0, "tps": 12345.678,
                                   "latency_ms": 0.081}
    (tmp_path / "log0.1234").write_text("0 0 81 0 1700000000 1\n0 1 95 0 1700000000 2\n")
    assert read_latencies(tmp_path, "log0") == [81_000, 95_000]
    assert not list(tmp_path.iterdir())  # logs consumed


def test_pgbench_refuses_other_ops(cli, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "pgbench", "--op", "select,insert",
              "-o", str(out))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "runs only the limit row's operations (select, update), not 'insert'" in res.stderr
    assert not out.exists()
