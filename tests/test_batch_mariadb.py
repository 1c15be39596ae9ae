"""batch on a real MariaDB (dbstand's managed server): PyMySQL and mysqlclient, every
api and op, the limit rows (seq_0_to_N, LOAD DATA LOCAL INFILE), SQLAlchemy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from batch_fixtures import FAST, by_key, case_records
from dbstand.workloads.batch.adapters.mysql import MYSQL_APIS


@pytest.mark.parametrize("stack", ["pymysql", "mysqlclient"])
def test_every_api_every_op(cli, mariadb_url: str, mariadb, tmp_path: Path,
                            stack: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", mariadb_url, "--stack", stack, "-o", str(out),
              "--rows", "200,400", "--large-rows", "400", *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    got = by_key(recs)
    for api in MYSQL_APIS:
        for op in ("insert", "update", "delete"):
            for rows in (200, 400):
                assert got[(stack, api.name, op, rows)]["rows_per_s"] > 0
    assert got[("limit", "limit:server-side", "update", 400)]["status"] == "ok"
    if shutil.which("mariadb") or shutil.which("mysql"):
        assert got[("limit", "limit:load-data", "insert", 400)]["status"] == "ok"
    assert "MariaDB" in str(recs[0]["environment"]["server"].get("version"))
    assert mariadb.password not in out.read_text() + res.stdout + res.stderr
    assert "batch update on mysql://dbstand:***@" in res.stdout


def test_sqlalchemy_orm_on_mysqlclient(cli, mariadb_url: str, tmp_path: Path
                                       ) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", mariadb_url, "--stack",
              "sqlalchemy-orm+mysqlclient,sqlalchemy-core", "--no-limit", "--rows", "150",
              "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    assert len(recs) == 7 and all(r["status"] == "ok" for r in recs)
