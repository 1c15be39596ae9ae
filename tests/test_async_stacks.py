"""The asyncio kv stacks on real servers: every op does its work, checked through the
synchronous admin stack (a second, independent client), alone and concurrently."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from dbstand.errors import TargetError
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.kv.client import AsyncKvClient, KvClient

PREFIX = "dbstand_"
ROWS = 300
CLIENTS = 6  # coroutines with a connection each
SHARED = 40  # coroutines sharing one multiplexing connection

ASYNC_STACKS = ("asyncpg", "psycopg-async", "aiomysql", "asynctnt", "sqlalchemy-async")
CASES = [("asyncpg", "postgresql"), ("psycopg-async", "postgresql"),
         ("sqlalchemy-async", "postgresql"), ("aiomysql", "mysql"),
         ("sqlalchemy-async", "mysql"), ("asynctnt", "tarantool")]


@pytest.fixture
def targets(request: pytest.FixtureRequest) -> Callable[[str], TargetURL]:
    """The target of a kind, starting its server only when a test needs it."""
    fixture = {"postgresql": "pg", "mysql": "mariadb", "tarantool": "tarantool_srv"}
    return lambda kind: request.getfixturevalue(fixture[kind]).target()


def client_class(stack: str, kind: str | None = None) -> type[AsyncKvClient]:
    """The adapter as the kv workload loads it: on the target's default driver."""
    spec = get_stack(stack)
    cls = (spec.for_target(kind) if kind else spec).load("kv")
    assert issubclass(cls, AsyncKvClient)
    return cls


def admin_for(client: AsyncKvClient) -> KvClient:
    """The admin stack's client with a fresh, filled kv table."""
    # the class-level admin_stack, as the kv workload reads it
    admin_stack = type(client).admin_stack
    assert admin_stack == client.admin_stack
    admin: KvClient = get_stack(admin_stack).load("kv")(client.target, PREFIX)
    admin.connect()
    admin.create_table()
    admin.fill((k, f"tuple_{k}") for k in range(1, ROWS + 1))
    return admin


async def spread(make: Callable[[], AsyncKvClient], op: str, params: Sequence[Any],
                 clients: int, coroutines_per_client: int = 1) -> list[object]:
    """Run `op` over `params` in clients x coroutines_per_client coroutines, as the
    asyncio executor does (each coroutine awaits its share one after another)."""
    opened = [make() for _ in range(clients)]
    for client in opened:
        await client.connect()
    try:
        calls = [client.operation(op) for client in opened for _ in range(coroutines_per_client)]

        async def worker(call: Callable[[Any], Awaitable[object]], share: Sequence[Any]
                         ) -> list[object]:
            return [await call(p) for p in share]

        n = len(calls)
        results = await asyncio.gather(*(worker(call, params[i::n])
                                         for i, call in enumerate(calls)))
    finally:
        for client in opened:
            await client.close()
    return [r for chunk in results for r in chunk]


def exercise(make: Callable[[], AsyncKvClient], admin: KvClient, clients: int,
             per_client: int = 1) -> None:
    """Every op, concurrently, each checked through the admin client."""

    def run(op: str, params: Sequence[Any]) -> list[object]:
        return asyncio.run(spread(make, op, params, clients, per_client))

    rows = run("select", [(k,) for k in range(1, 61)] + [(ROWS + 1000,)])
    found = sorted((int(r[0]), str(r[1])) for r in rows if r is not None)  # type: ignore[index]
    assert found == [(k, f"tuple_{k}") for k in range(1, 61)]
    assert sum(r is None for r in rows) == 1  # the missing key

    run("insert", [(f"tuple_{ROWS + j}",) for j in range(1, 61)])
    assert admin.count() == ROWS + 60
    new_ids = sorted(admin.fetch_names(range(ROWS + 1, ROWS + 61)))
    assert new_ids == list(range(ROWS + 1, ROWS + 61))  # ids from the sequence
    admin.delete_above(ROWS)

    run("update", [(f"u_{k}", k) for k in range(1, 41)])
    assert admin.fetch_names(range(1, 41)) == {k: f"u_{k}" for k in range(1, 41)}

    miss = ROWS + 500
    for op in ("upsert", "replace"):  # hits and one miss
        run(op, [(k, f"{op}_{k}") for k in range(41, 81)] + [(miss, f"{op}_miss")])
        assert admin.fetch_names(range(41, 81)) == {k: f"{op}_{k}" for k in range(41, 81)}
        assert admin.fetch(miss) == (miss, f"{op}_miss")
        assert admin.count() == ROWS + 1
        admin.delete_above(ROWS)
    assert admin.fetch(41) == (41, "replace_41")

    run("delete", [(k,) for k in range(101, 151)])
    assert admin.count() == ROWS - 50
    assert admin.fetch_names(range(95, 156)) == \
        {k: f"tuple_{k}" for k in (*range(95, 101), *range(151, 156))}


@pytest.mark.parametrize(("stack", "kind"), CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_every_op_concurrently(stack: str, kind: str,
                               targets: Callable[[str], TargetURL]) -> None:
    target = targets(kind)
    cls = client_class(stack, kind)
    probe = cls(target, PREFIX)
    admin = admin_for(probe)
    try:
        exercise(lambda: cls(target, PREFIX), admin, clients=CLIENTS)
        assert probe.describe().startswith(stack.split("-")[0].replace("sqlalchemy",
                                                                       "SQLAlchemy"))
        forms = probe.forms()
        assert set(forms) >= {"upsert", "replace"}
        admin.drop_table()
    finally:
        admin.close()


def test_native_forms_rendered_by_sqlalchemy(targets: Callable[[str], TargetURL]) -> None:
    """SQLAlchemy's Core constructs render each database's native upsert and replace."""
    cls = client_class("sqlalchemy-async")
    expected = {"postgresql": ("ON CONFLICT (id) DO UPDATE SET name = excluded.name",
                               "DO UPDATE SET id = excluded.id, name = excluded.name"),
                "mysql": ("ON DUPLICATE KEY UPDATE", "REPLACE INTO dbstand_kv")}
    for kind, (upsert, replace) in expected.items():
        client = cls(targets(kind), PREFIX)

        async def render(client: Any = client) -> dict[str, str]:
            await client.connect()
            try:
                return {op: client.sql(op) for op in ("insert", "upsert", "replace")}
            finally:
                await client.close()

        sql = asyncio.run(render())
        assert upsert in sql["upsert"] and replace in sql["replace"]
        # the same INSERT as the other stacks: no RETURNING, no nextval() first
        assert sql["insert"].startswith("INSERT INTO dbstand_kv (name) VALUES")
        assert "RETURNING" not in sql["insert"]


def test_asyncpg_prepares(targets: Callable[[str], TargetURL]) -> None:
    """What describe() claims: asyncpg's statements are server-side prepared."""
    cls = client_class("asyncpg")
    client = cls(targets("postgresql"), PREFIX)
    admin = admin_for(client)

    async def go() -> list[str]:
        await client.connect()
        try:
            select = client.operation("select")
            assert tuple(await select((7,))) == (7, "tuple_7")  # type: ignore[arg-type]
            rows = await client.conn.fetch("SELECT statement FROM pg_prepared_statements")
            return [r[0] for r in rows]
        finally:
            await client.close()

    try:
        assert any("FROM dbstand_kv WHERE id = $1" in s for s in asyncio.run(go()))
        assert "prepared automatically" in client.describe()
    finally:
        admin.drop_table()
        admin.close()


def test_asynctnt_shares_one_connection(targets: Callable[[str], TargetURL]) -> None:
    """Many coroutines on one asynctnt connection, every op (its point: multiplexing)."""
    cls = client_class("asynctnt")
    target = targets("tarantool")
    probe = cls(target, PREFIX)
    assert probe.multiplexes
    admin = admin_for(probe)
    try:
        exercise(lambda: cls(target, PREFIX), admin, clients=1, per_client=SHARED)
        admin.drop_table()
    finally:
        admin.close()


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "text"])
def test_asynctnt_sql_protocol(prepared: bool, targets: Callable[[str], TargetURL]) -> None:
    """kv through Tarantool SQL; prepared statements really are prepared on the server."""
    cls = client_class("asynctnt[sql]")  # the registry's protocol variant
    target = targets("tarantool")

    def make() -> AsyncKvClient:
        client = cls(target, PREFIX)
        client.prepared = prepared  # type: ignore[attr-defined]
        return client

    probe = make()
    admin = admin_for(probe)
    try:
        exercise(make, admin, clients=2, per_client=SHARED // 2)
        assert probe.protocol == "sql"  # type: ignore[attr-defined]
        assert ("unprepared" in probe.describe()) is not prepared
        assert probe.forms()["replace"].startswith("REPLACE INTO")

        async def statements_after_select() -> int:
            client = make()
            await client.connect()
            try:
                row = await client.operation("select")((200,))
                assert tuple(row) == (200, "tuple_200")  # type: ignore[arg-type]
                data = await client.conn.eval(  # type: ignore[attr-defined]
                    "return box.info.sql().cache.stmt_count")
                return int(data[0])
            finally:
                await client.close()

        count = asyncio.run(statements_after_select())
        assert (count > 0) if prepared else (count == 0)
        admin.drop_table()
    finally:
        admin.close()


def test_asynctnt_sql_inserts_leave_the_server_up(targets: Callable[[str], TargetURL]) -> None:
    """Prepared INSERTs with sequence ids crash Tarantool < 2.10.4 (gh-6422) within a few
    hundred executions interleaved with other sessions' requests, as the kv workload's
    iterations do: the client must not send them there."""
    cls = client_class("asynctnt[sql]")
    client = cls(targets("tarantool"), PREFIX)
    admin = admin_for(client)

    async def go() -> str:
        await client.connect()
        try:
            insert = client.operation("insert")
            for round_ in range(3):
                for j in range(400):
                    await insert((f"x{round_}_{j}",))
                assert admin.count() == ROWS + 400 * (round_ + 1)
            return client.forms()["insert"]
        finally:
            await client.close()

    try:
        form = asyncio.run(go())
        version = tuple(int(x) for x in str(admin.conn.eval(
            "return box.info.version").data[0]).split("-")[0].split(".")[:3])
        assert ("SQL text" in form) == (version < (2, 10, 4))
        admin.drop_table()
    finally:
        admin.close()


def test_asynctnt_survives_space_created_after_connect(
        targets: Callable[[str], TargetURL]) -> None:
    """Clients connected before the space existed, or before it was re-created (new
    space id, expired prepared statements), still work: both protocols."""
    cls = client_class("asynctnt")
    target = targets("tarantool")
    clients = {p: cls(target, PREFIX) for p in ("binary", "sql")}
    for protocol, client in clients.items():
        client.protocol = protocol  # type: ignore[attr-defined]
    admin = admin_for(clients["binary"])
    admin.drop_table()

    async def go() -> None:
        for client in clients.values():
            await client.connect()
        try:
            selects = {p: c.operation("select") for p, c in clients.items()}
            for name in ("first", "again"):
                admin.create_table()  # drop and create: a new space id each time
                admin.fill([(9, name)])
                for select in selects.values():
                    assert tuple(await select((9,))) == (9, name)  # type: ignore[arg-type]
            updates = [c.operation("update") for c in clients.values()]
            await asyncio.gather(*(update((f"x{i}", 9)) for i, update in enumerate(updates)))
            assert admin.fetch(9) in ((9, "x0"), (9, "x1"))
        finally:
            for client in clients.values():
                await client.close()

    try:
        asyncio.run(go())
        admin.drop_table()
    finally:
        admin.close()


@pytest.mark.parametrize(("stack", "kind"), CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_wrong_password_is_one_line(stack: str, kind: str, targets: Callable[[str], TargetURL],
                                    caplog: pytest.LogCaptureFixture) -> None:
    target = targets(kind).with_password("not-the-password")
    client = client_class(stack, kind)(target, PREFIX)
    with pytest.raises(TargetError) as info:
        asyncio.run(client.connect())
    message = str(info.value)
    assert "\n" not in message and "not-the-password" not in message
    assert message.startswith("authentication failed for ")
    assert target.redacted() in message
    # nothing else said about it (asynctnt logs failed logins itself)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_unreachable_server_is_one_line() -> None:
    for stack, url in (("asyncpg", "postgresql://u:p@127.0.0.1:9/db"),
                       ("psycopg-async", "postgresql://u:p@127.0.0.1:9/db"),
                       ("aiomysql", "mysql://u:p@127.0.0.1:9/db"),
                       ("sqlalchemy-async", "mysql://u:p@127.0.0.1:9/db"),
                       ("asynctnt", "tarantool://u:p@127.0.0.1:9")):
        client = client_class(stack)(parse_target_url(url), PREFIX)
        with pytest.raises(TargetError, match="cannot connect") as info:
            asyncio.run(client.connect())
        assert "\n" not in str(info.value)


def test_registered_as_async() -> None:
    for stack in ASYNC_STACKS:
        spec = get_stack(stack)
        assert spec.is_async and "kv" in spec.adapters and spec.installed
        cls = client_class(stack)
        assert cls.stack == stack
        assert "kv" in get_stack(cls.admin_stack).adapters
    assert not get_stack("psycopg").is_async
    assert get_stack("asynctnt[sql]").load("kv").protocol == "sql"
    alchemy = get_stack("sqlalchemy-async")
    for kind, admin in (("postgresql", "psycopg"), ("mysql", "pymysql")):
        assert alchemy.for_target(kind).load("kv").admin_stack == admin
