"""docquery's data on FerretDB as a full study meets it: loaded by the bulk path, then
checked before each stack is measured (the shared session FerretDB, 200 posts).

The study of 2026-11-27 failed every stack after the first: each stack's start checked
the loaded set again with a `count`, which FerretDB 1.x answers by reading every
document (over 10 s for 1,000,000 on SQLite), and the loader's client gave an answer
the 10 s connect limit. These tests hold the three parts of the fix on a small set: the
set is checked once per run, the loader's client waits the read limit for an answer,
and the bulk path keeps the first page first in natural order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import DOCQUERY_SEED as SEED
from conftest import DOCQUERY_SIZE as SIZE
from dbstand.targets.url import TargetURL
from dbstand.workloads.docquery import data

PREFIX = "dbstand_"


def counts_served(db: Any) -> int:
    """`count` commands the FerretDB server has answered since it started (its own
    serverStatus metrics)."""
    commands = db.command("serverStatus")["metrics"]["commands"]
    return int(commands.get("count", {}).get("total", 0))


def test_set_checked_once_per_run(cli, ferret: TargetURL, tmp_path: Path) -> None:
    """Two stacks on one FerretDB: the set is counted once in the run, not once per
    stack (a full scan each on FerretDB)."""
    out = tmp_path / "d.jsonl"
    with data.connected(ferret) as (_, db):
        before = counts_served(db)
        res = cli("run", "docquery", "--stack",
                  "docquery-tornado-pymongo,docquery-tornado-motor",
                  "--target", ferret.secret(), "--size", str(SIZE), "--seed", str(SEED),
                  "--test", "test2", "--connections", "new", "--load", "seed",
                  "--repeats", "2", "-o", str(out))
        after = counts_served(db)
    assert res.code == 0, res.stderr + res.stdout[-2000:]
    cases = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "case"]
    assert [(r["stack"], r["status"]) for r in cases] == [
        ("docquery-tornado-pymongo", "ok"), ("docquery-tornado-motor", "ok")]
    assert after - before == 1


def test_loader_waits_the_read_limit(ferret: TargetURL, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
    """The loader's client: the connect limit to connect, the read limit for an answer
    (a count of a large set takes far longer than a connect)."""
    monkeypatch.setenv("DBSTAND_CONNECT_TIMEOUT", "2")
    monkeypatch.setenv("DBSTAND_READ_TIMEOUT", "37")
    with data.connected(ferret) as (_, db):
        options = db.client.options
        assert options.pool_options.connect_timeout == 2
        assert options.server_selection_timeout == 2
        assert options.pool_options.socket_timeout == 37
        assert db.command("ping")["ok"] == 1


def test_bulk_load_keeps_the_first_page_first(ferret: TargetURL) -> None:
    """Many small batches, four in flight: the server stores them in any order, but
    the first page (what every stack must answer) is the set's first 30 documents."""
    prefix = "dbstand_dqorder_"
    size = 3_000
    with data.connected(ferret) as (_, db):
        try:
            result = data.load_mongo(db, size, SEED, prefix=prefix, batch=40)
            assert (result.documents, result.reused) == (size, False)
            page = list(db[f"{prefix}posts"].find(limit=data.PAGE))
            got = [{"_id": str(d["_id"]), "title": d["title"],
                    "created": d["created"].strftime(data.CREATED_FORMAT)} for d in page]
            assert got == data.expected_page(size, SEED)
            again = data.load_mongo(db, size, SEED, prefix=prefix)
            assert (again.documents, again.reused) == (size, True)
        finally:
            data.drop_mongo(db, prefix)
        assert f"{prefix}posts" not in db.list_collection_names()


def commands_served(db: Any, name: str) -> int:
    """`name` commands the FerretDB server has answered since it started."""
    commands = db.command("serverStatus")["metrics"]["commands"]
    return int(commands.get(name, {}).get("total", 0))


def test_a_set_that_failed_to_load_fails_later_cases_at_once(cli, ferret: TargetURL,
                                                             tmp_path: Path) -> None:
    """A set that fails to load (here: its collection is someone else's) fails the
    first case, and every later case on the same set at once with the same reason,
    without asking the server again: a stalled FerretDB cost each case the read limit
    (up to 600 s) before."""
    prefix = "dbstand_dqfail_"
    out = tmp_path / "d.jsonl"
    with data.connected(ferret) as (_, db):
        db.create_collection(f"{prefix}posts")  # not dbstand's: the loader refuses it
        try:
            before = commands_served(db, "ping")
            res = cli("run", "docquery", "--stack",
                      "docquery-tornado-pymongo,docquery-tornado-motor",
                      "--target", ferret.secret(), "--size", str(SIZE), "--seed", str(SEED),
                      "--prefix", prefix, "--test", "test2", "--connections", "new",
                      "--load", "seed", "--repeats", "2", "-o", str(out))
            pings = commands_served(db, "ping") - before
        finally:
            db.drop_collection(f"{prefix}posts")
    assert res.code == 1, res.stderr + res.stdout[-2000:]
    assert "Traceback" not in res.stdout + res.stderr
    cases = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "case"]
    assert [r["status"] for r in cases] == ["failed", "failed"]
    first, later = (r["error"] for r in cases)
    assert f"{prefix}posts" in first and "\n" not in first
    assert later == f"the posts set failed to load or check earlier in this run: {first}"
    assert pings == 1  # the loader's one connection: the later case did not try again
