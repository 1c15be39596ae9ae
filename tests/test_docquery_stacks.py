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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import get_manifest, stacks_for
from dbstand.targets.managed import ServerRecord
from dbstand.targets.url import TargetURL
from dbstand.workloads.docquery import data
from dbstand.workloads.docquery.verify import PATH, check_answer, verify_stack

pytest.importorskip("pymongo")
pytest.importorskip("psycopg")

SIZE, SEED, PREFIX = 200, 11, "dbstand_"
MONGO_STACKS = ["docquery-tornado-pymongo", "docquery-tornado-pymongo-gevent",
                "docquery-tornado-motor", "docquery-tornado-pymongo-async",
                "docquery-tornado-mongoengine"]
SQL_STACKS = ["docquery-tornado-psycopg", "docquery-tornado-asyncpg",
              "docquery-tornado-sqlalchemy-async"]


@pytest.fixture(scope="module")
def ferret() -> Iterator[TargetURL]:
    from dbstand.targets.mongodb.managed import ManagedFerretDB

    with ManagedFerretDB() as record:
        url = record.target()
        data.load_url(url, SIZE, SEED, prefix=PREFIX)
        yield url


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
