"""asynctnt: Tarantool's asyncio connector (Cython), the pure-asyncio side of seed 004.

One connection carries any number of concurrent requests (IPROTO matches answers
to requests by sync id), so `multiplexes = True`: the asyncio executor may run all
its coroutines on one client. Two protocols, chosen by `protocol`:
- "binary": space requests on `<prefix>kv`: select by primary key, insert with a
  nil id that the space's sequence fills, update, space:upsert, space:replace,
  delete;
- "sql": the same operations as SQL through `execute`, prepared once per session
  (asynctnt has IPROTO_PREPARE), or sent as text with `prepared = False`.
  Tarantool's SQL has no upsert (no ON CONFLICT DO UPDATE): as the synchronous
  `tarantool` stack, UPDATE, then INSERT if no row matched; replace is `REPLACE INTO`.
  On servers before 2.10.4 insert goes as SQL text: prepared, it crashes them
  (see `_unsafe_prepared_insert`).

The space is created by the synchronous `tarantool` stack (the admin stack): a
client may have connected before it existed or before it was re-created, so a
request that fails on a stale schema (unknown name, old space id, expired
prepared statement) refreshes it once and is retried; nothing is added to the
request path when the schema is current.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asynctnt
from asynctnt.exceptions import (
    ErrorCode,
    TarantoolDatabaseError,
    TarantoolError,
    TarantoolSchemaError,
)

from dbstand.drivers.endpoint import endpoint
from dbstand.errors import CaseFailed, UserError
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.managed import password_for
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import AsyncKvClient, AsyncOp

PROTOCOLS = ("binary", "sql")
#: 0-based field number of `name` in IPROTO update operations (Lua counts from 1)
NAME_FIELD = 1

# worded as the `tarantool` stack's forms, so that results line up
BINARY_FORMS = {
    "select": "space:select by primary key",
    "insert": "space:insert{nil, name} (id from the space's sequence)",
    "update": "space:update(id, {{'=', 2, name}})",
    "upsert": "space:upsert", "replace": "space:replace", "delete": "space:delete",
}

SQL_FORMS = {
    "select": "SELECT ... WHERE id = ?", "insert": "INSERT (name) (id from the sequence)",
    "update": "UPDATE ... WHERE id = ?",
    "upsert": "no SQL upsert in Tarantool: UPDATE, then INSERT if no row matched",
    "replace": "REPLACE INTO", "delete": "DELETE ... WHERE id = ?",
}

Request = Callable[[Any], Awaitable[Any]]


def _not_auth_failure(record: logging.LogRecord) -> bool:
    """asynctnt logs a failed login before raising it; dbstand reports it as one line."""
    return "Authorization failed" not in str(record.msg)


logging.getLogger("asynctnt").addFilter(_not_auth_failure)


def sql_statements(space: str) -> dict[str, str]:
    """kv's SQL on a space made in Lua: lowercase names, so quoted."""
    t = f'"{space}"'
    return {
        "select": f'SELECT "id", "name" FROM {t} WHERE "id" = ?',
        "insert": f'INSERT INTO {t} ("name") VALUES (?)',
        "update": f'UPDATE {t} SET "name" = ? WHERE "id" = ?',
        "replace": f'REPLACE INTO {t} ("id", "name") VALUES (?, ?)',
        "delete": f'DELETE FROM {t} WHERE "id" = ?',
        "insert_with_id": f'INSERT INTO {t} ("id", "name") VALUES (?, ?)',  # upsert's miss
    }


class _Statement:
    """One SQL statement of this session: its prepared id, and how often it was prepared."""

    __slots__ = ("generation", "id", "sql")

    def __init__(self, sql: str):
        self.sql = sql
        self.id: int | None = None
        self.generation = 0


class AsynctntKv(AsyncKvClient):
    """One asynctnt connection, shareable by many coroutines at once."""

    stack = "asynctnt"
    admin_stack = "tarantool"
    multiplexes = True
    #: "binary" (space requests) or "sql" (execute)
    protocol = "binary"
    #: with protocol "sql": execute prepared statements (True) or SQL text (False)
    prepared = True

    def __init__(self, target: TargetURL, prefix: str, protocol: str | None = None,
                 prepared: bool | None = None):
        super().__init__(target, prefix)
        if protocol is not None:
            self.protocol = protocol
        if prepared is not None:
            self.prepared = prepared
        self.space = f"{prefix}kv"
        self.conn: asynctnt.Connection | None = None
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        t = self.target
        password = t.password or password_for(t)
        self.conn = asynctnt.Connection(
            host=endpoint(t).host, port=endpoint(t).port, username=t.user,
            password=password if t.user else None,
            connect_timeout=10,
            reconnect_timeout=0,  # fail at once instead of retrying forever
            ping_timeout=0,  # no background pings in the measured traffic
        )
        try:
            await self.conn.connect()
        except Exception as exc:  # TarantoolDatabaseError, OSError, TimeoutError...
            self.conn.close()
            self.conn = None
            raise connect_error(exc, t) from None

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.disconnect()
            finally:
                self.conn = None

    # --- timed operations ------------------------------------------------------
    def operation(self, op: str) -> AsyncOp:
        if self.protocol not in PROTOCOLS:
            raise UserError(f"asynctnt protocol must be one of {', '.join(PROTOCOLS)}, "
                            f"not {self.protocol!r}")
        if op not in BINARY_FORMS:
            raise CaseFailed(f"unknown kv operation {op!r}")
        if self.conn is None:
            raise CaseFailed("asynctnt: operation() before connect()")
        if self.protocol == "binary":
            return self._binary(op)
        return self._sql(op)

    def _binary(self, op: str) -> AsyncOp:
        request = self._binary_request(op)
        recover = self._recover_schema

        if op == "select":

            async def select(params: Any) -> object:
                try:
                    rows = (await request(params)).body
                except TarantoolError as exc:
                    await recover(exc)
                    rows = (await request(params)).body
                return rows[0] if rows else None

            return select

        async def write(params: Any) -> object:
            try:
                return await request(params)
            except TarantoolError as exc:
                await recover(exc)
                return await request(params)

        return write

    def _binary_request(self, op: str) -> Request:
        """The space request of `op` on one parameter tuple (as built by the kv workload)."""
        conn, space = self.conn, self.space
        assert conn is not None
        if op == "select":  # (id,)
            select = conn.select
            return lambda p: select(space, p)
        if op == "insert":  # (name,): nil id, filled by the sequence
            insert = conn.insert
            return lambda p: insert(space, [None, p[0]])
        if op == "update":  # (name, id)
            update = conn.update
            return lambda p: update(space, [p[1]], [["=", NAME_FIELD, p[0]]])
        if op == "upsert":  # (id, name)
            upsert = conn.upsert
            return lambda p: upsert(space, p, [["=", NAME_FIELD, p[1]]])
        if op == "replace":  # (id, name)
            replace = conn.replace
            return lambda p: replace(space, p)
        delete = conn.delete  # (id,)
        return lambda p: delete(space, p)

    def _sql(self, op: str) -> AsyncOp:
        statements = sql_statements(self.space)
        if op == "insert" and self._unsafe_prepared_insert():
            return self._sql_request(statements[op], prepared=False)
        if op != "upsert":
            return self._sql_request(statements[op], first_row=op == "select")
        # no SQL upsert in Tarantool: as the `tarantool` stack, UPDATE, then INSERT if no
        # row matched (keys drawn from existing rows: the UPDATE always matches)
        update = self._sql_request(statements["update"])
        insert = self._sql_request(statements["insert_with_id"])

        async def upsert(params: Any) -> object:
            key, name = params
            if (await update((name, key))).rowcount == 0:  # type: ignore[attr-defined]
                return await insert(params)
            return None

        return upsert

    def _unsafe_prepared_insert(self) -> bool:
        """Whether a prepared INSERT taking its id from the sequence would crash the server.

        Before tarantool PR 7872 (gh-6422: in 2.10.4 and 2.11) a prepared statement kept
        its list of auto-increment ids across executions; Tarantool 2.6.0 segfaults
        within a few hundred such executions (seen here, with asynctnt alone too). On
        those servers insert goes as SQL text; `forms()` and `describe()` say so.
        """
        version = tuple(self.conn.version or ()) if self.conn is not None else ()
        return self.prepared and bool(version) and version < (2, 10, 4)

    def _sql_request(self, sql: str, first_row: bool = False,
                     prepared: bool | None = None) -> AsyncOp:
        """`sql` executed on one parameter tuple, prepared once per session unless
        `prepared` (default: the client's) is off; the response, or its first row (None
        if none) for `first_row`."""
        assert self.conn is not None
        execute = self.conn.execute
        if not (self.prepared if prepared is None else prepared):

            async def run_text(params: Any) -> object:
                resp = await execute(sql, params)
                if first_row:
                    return resp.body[0] if resp.body else None
                return resp

            return run_text
        stmt = _Statement(sql)
        renew = self._renew_statement

        async def run_prepared(params: Any) -> object:
            if stmt.id is None:
                await renew(stmt, stmt.generation)
            try:
                resp = await execute(stmt.id, params)
            except TarantoolDatabaseError as exc:
                if not _statement_expired(exc):
                    raise
                await renew(stmt, stmt.generation)
                resp = await execute(stmt.id, params)
            if first_row:
                return resp.body[0] if resp.body else None
            return resp

        return run_prepared

    # --- stale schema ------------------------------------------------------------
    async def _recover_schema(self, exc: TarantoolError) -> None:
        """Refresh the schema after a request failed on a stale one; re-raise otherwise.

        Under a lock, once: concurrent coroutines failing together must not start
        overlapping refetches (asynctnt cancels a refetch in progress).
        """
        stale = isinstance(exc, TarantoolSchemaError) or (
            isinstance(exc, TarantoolDatabaseError) and exc.code == ErrorCode.ER_NO_SUCH_SPACE)
        conn = self.conn
        if not stale or conn is None:
            raise exc
        seen = conn.schema_id
        async with self._lock:
            if conn.schema_id == seen:
                await conn.refetch_schema()

    async def _renew_statement(self, stmt: _Statement, seen_generation: int) -> None:
        """Prepare `stmt` (first use, or expired by a schema change), once for all waiters."""
        assert self.conn is not None
        async with self._lock:
            if stmt.generation == seen_generation:
                stmt.id = (await self.conn.prepare_iproto(stmt.sql)).stmt_id
                stmt.generation += 1

    def forms(self) -> dict[str, str]:
        if self.protocol == "sql":
            how = " (prepared)" if self.prepared else " (SQL text)"
            forms = {op: form + how for op, form in SQL_FORMS.items()}
            if self._unsafe_prepared_insert():
                forms["insert"] = (SQL_FORMS["insert"] + " (SQL text: a prepared INSERT with "
                                   "sequence ids crashes Tarantool < 2.10.4)")
            return forms
        return dict(BINARY_FORMS)

    def describe(self) -> str:
        if self.protocol == "sql":
            how = ("SQL via execute, statements prepared once per connection (IPROTO_PREPARE)"
                   if self.prepared else "SQL via execute, unprepared SQL text")
            if self._unsafe_prepared_insert():
                how += " except insert, sent as text (prepared it crashes Tarantool < 2.10.4)"
        else:
            how = "binary protocol space requests"
        return (f"asynctnt {asynctnt.__version__}: {how}; one connection may be shared "
                "by many coroutines")


def _statement_expired(exc: TarantoolDatabaseError) -> bool:
    """A prepared statement made void by a schema change (or unknown to the session)."""
    if exc.code == ErrorCode.ER_SQL_EXECUTE:
        return "expired" in (exc.message or "")
    return exc.code == ErrorCode.ER_WRONG_QUERY_ID

