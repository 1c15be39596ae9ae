"""docquery server stacks against real servers: FerretDB (SQLite backend) for the
MongoDB-wire stacks, PostgreSQL for the relational ones, 200 documents each.

Every stack is started by dbstand's launcher (its venv is built once into the cache
on first use), its answer is verified as a run would, and a short concurrent burst
must give the same answer every time. The first run on a machine builds FerretDB
(Go) and the stacks' venvs (pip); later runs take seconds per stack.
"""

from __future__ import annotations

import http.client
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import DOCQUERY_SEED as SEED
from conftest import DOCQUERY_SIZE as SIZE
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import get_manifest, stacks_for
from dbstand.targets.managed import ServerRecord
from dbstand.targets.url import TargetURL
from dbstand.workloads.docquery import data
from dbstand.workloads.docquery.verify import PATH, check_answer, verify_stack

PREFIX = "dbstand_"
MONGO_STACKS = ["docquery-tornado-pymongo", "docquery-tornado-pymongo-gevent",
                "docquery-tornado-motor", "docquery-tornado-pymongo-async",
                "docquery-tornado-mongoengine"]
SQL_STACKS = ["docquery-tornado-psycopg", "docquery-tornado-asyncpg",
              "docquery-tornado-sqlalchemy-async"]


@pytest.fixture(scope="module")
def pg_posts(pg: ServerRecord) -> TargetURL:
    url = pg.target()
    data.load_url(url, SIZE, SEED, prefix=PREFIX)
    return url


def get(port: int) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", PATH)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def serve_and_check(name: str, target: TargetURL) -> None:
    manifest = get_manifest(name, "docquery")
    with running_stack(manifest, target=target, prefix=PREFIX) as handle:
        checks = verify_stack(handle, target, PREFIX)
        assert [c.ok for c in checks] == [True], checks
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: get(handle.port), range(40)))
        assert {status for status, _ in answers} == {200}
        assert len({body for _, body in answers}) == 1
        pid = handle.pid
    assert not handle.alive(), f"{name} (pid {pid}) still runs after stop"


def test_every_docquery_stack_is_listed() -> None:
    names = {m.name for m in stacks_for("docquery")}
    assert set(MONGO_STACKS + SQL_STACKS) <= names
    for name in MONGO_STACKS + SQL_STACKS:
        manifest = get_manifest(name)
        assert manifest.framework == "tornado" and manifest.python == "own"
        assert all("==" in requirement for requirement in manifest.pip)


@pytest.mark.parametrize("name", MONGO_STACKS)
def test_mongodb_wire_stack(name: str, ferret: TargetURL) -> None:
    serve_and_check(name, ferret)


@pytest.mark.parametrize("name", SQL_STACKS)
def test_postgresql_stack(name: str, pg_posts: TargetURL) -> None:
    serve_and_check(name, pg_posts)


def test_both_kinds_hold_the_same_first_page(ferret: TargetURL, pg_posts: TargetURL) -> None:
    assert data.loaded_set(ferret, PREFIX) == data.loaded_set(pg_posts, PREFIX) == (SIZE, SEED)
    with data.connected(ferret) as (_, db):
        ids = [str(d["_id"]) for d in db[f"{PREFIX}posts"].find(limit=data.PAGE)]
    with data.connected(pg_posts) as (_, conn):
        rows = conn.execute(f"SELECT id FROM {PREFIX}posts ORDER BY id LIMIT 30").fetchall()
    assert ids == [row[0] for row in rows] == [p["_id"] for p in data.expected_page(SIZE, SEED)]


def test_wrong_answers_are_caught() -> None:
    expected = data.expected_page(SIZE, SEED)
    assert check_answer(json.dumps(expected), expected) == []
    assert check_answer(json.dumps(expected[:29]), expected)
    assert check_answer(json.dumps(expected[1:] + expected[:1]), expected)
    bad_time = [{**item, "created": item["created"].replace(" ", "T")} for item in expected]
    assert check_answer(json.dumps(bad_time), expected)
    extra = [{**item, "body": ""} for item in expected]
    assert check_answer(json.dumps(extra), expected)
    assert check_answer("not json", expected)


def test_run_docquery_end_to_end(cli, ferret: TargetURL, pg_posts: TargetURL,
                                 tmp_path: Path) -> None:
    """The study's table from a tiny run: blocking vs async vs ODM on FerretDB, and the
    SQL analog, each verified, then loaded as ab would (new connection per request)."""
    out = tmp_path / "d.jsonl"
    res = cli("run", "docquery", "--stack", "docquery-tornado-pymongo,docquery-tornado-motor,"
              "docquery-tornado-mongoengine,docquery-tornado-psycopg",
              "--target", f"{ferret.secret()},{pg_posts.secret()}", "--size", str(SIZE),
              "--seed", str(SEED),
              "--test", "test2", "--connections", "new,keepalive", "--load", "seed",
              "--repeats", "2",
              "-o", str(out))
    assert res.code == 0, res.stderr + res.stdout[-2000:]
    assert "ApacheBench" in res.stdout and "vs ref" in res.stdout
    records = [json.loads(line) for line in out.read_text().splitlines()]
    cases = [r for r in records if r["type"] == "case"]
    assert len(cases) == 4 * 2 and all(r["status"] == "ok" for r in cases)
    motor = next(r for r in cases if r["stack"].endswith("motor") and r["mode"] == "new")
    assert motor["requests"] == 2 * 100 and motor["errors"]["non_2xx"] == 0
    assert set(motor["ab"]["percentiles_ms"]) == {"50", "66", "75", "80", "90", "95", "98",
                                                  "99", "100"}
    csv_text = cli("report", str(out), "-f", "csv").stdout
    assert "vs_reference" in csv_text.splitlines()[0]
