"""SQLAlchemy 2.1 Core on an AsyncEngine: asyncpg on PostgreSQL, aiomysql on MySQL.

What is measured is SQLAlchemy's own cost on top of an asyncio driver: building
parameters, the compiled-statement cache, result objects and the greenlet bridge.
The statements are Core constructs rendering the same SQL as the synchronous
stacks (sql/dialects.py), upsert and replace in each database's native form, and
run under the AUTOCOMMIT isolation level so that each statement is its own
transaction with no extra BEGIN/COMMIT round trips, as with the other kv stacks.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy
from sqlalchemy import (
    BigInteger,
    Column,
    FetchedValue,
    MetaData,
    String,
    Table,
    bindparam,
    delete,
    select,
    update,
)
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert

from dbstand.drivers.endpoint import endpoint
from dbstand.drivers.mysql_args import connect_args
from dbstand.errors import CaseFailed, MissingDependencyError, UserError
from dbstand.sql.dialects import dialect_for
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.managed import password_for
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import AsyncKvClient, AsyncOp


def _libpq_url(url_driver: str, t: TargetURL) -> URL:
    """The target's own fields; the user's name is the default database."""
    return URL.create(url_driver, username=t.user, password=t.password or password_for(t),
                      host=t.host, port=endpoint(t).port, database=t.database or t.user)


def _mysql_url(url_driver: str, t: TargetURL) -> URL:
    """As the sync MySQL stacks: password_for, database required (drivers/mysql_args)."""
    args = connect_args(t)
    return URL.create(url_driver, username=args["user"], password=args["password"],
                      host=args["host"], port=args["port"], database=args["database"],
                      query={"charset": "utf8mb4"})


@dataclass(frozen=True)
class Driver:
    """An asyncio driver SQLAlchemy can sit on (named as its stack and its package)."""

    kind: str                    # the target kind it talks to
    url_driver: str              # SQLAlchemy's dialect+driver name
    admin_stack: str             # sync stack managing the table on that kind
    connect_args: dict[str, Any]
    url: Callable[[str, TargetURL], URL]  # the engine's URL for a target
    statements: str              # how its statements reach the server (describe())


#: driver stack -> how SQLAlchemy uses it; the first per target kind is the default
DRIVERS: dict[str, Driver] = {
    "asyncpg": Driver("postgresql", "postgresql+asyncpg", "psycopg", {"timeout": 10},
                      _libpq_url, "asyncpg prepared statements, cached by SQLAlchemy"),
    "aiomysql": Driver("mysql", "mysql+aiomysql", "pymysql", {"connect_timeout": 10},
                       _mysql_url, "parameters interpolated client-side"),
}

# how each op turns its parameter tuple into SQLAlchemy's parameter dict
_PARAMS = {
    "select": lambda p: {"k": p[0]},
    "insert": lambda p: {"v": p[0]},
    "update": lambda p: {"v": p[0], "k": p[1]},
    "upsert": lambda p: {"k": p[0], "v": p[1]},
    "replace": lambda p: {"k": p[0], "v": p[1]},
    "delete": lambda p: {"k": p[0]},
}


class Replace(Insert):
    """MySQL's REPLACE INTO as a Core construct (SQLAlchemy has none of its own)."""

    inherit_cache = True


@compiles(Replace, "mysql")
def _compile_replace(element: Replace, compiler: SQLCompiler, **kw: Any) -> str:
    text = compiler.visit_insert(element, **kw)
    if not text.startswith("INSERT"):
        raise CaseFailed(f"cannot turn {text[:30]!r}... into REPLACE")
    return "REPLACE" + text[len("INSERT"):]


def kv_table(name: str) -> Table:
    """The kv table as Core sees it.

    `autoincrement=False` with a server-side default: SQLAlchemy then leaves the id
    to the server's identity / AUTO_INCREMENT instead of pre-executing nextval() on
    PostgreSQL, and no RETURNING is added, so INSERT is the same statement as in
    the other stacks.
    """
    return Table(
        name, MetaData(),
        Column("id", BigInteger, primary_key=True, autoincrement=False,
               server_default=FetchedValue()),
        Column("name", String(64), nullable=False),
        implicit_returning=False,
    )


class SqlalchemyAsyncKv(AsyncKvClient):
    """One AsyncConnection held for the client's life, from its own one-connection pool."""

    stack = "sqlalchemy-async"
    #: the driver stack, set on the registry's variants (`sqlalchemy-async+aiomysql`);
    #: None: the default driver of the target's kind
    driver: str | None = None
    #: the sync stack for untimed work; a variant's is its driver's (see __init_subclass__),
    #: an instance's that of the driver it uses
    admin_stack = "psycopg"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """The registry makes a variant by subclassing with `driver` set: its class-level
        admin_stack must then be the one of that driver's target kind."""
        super().__init_subclass__(**kwargs)
        if cls.driver in DRIVERS:
            cls.admin_stack = DRIVERS[cls.driver].admin_stack

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        name = self.driver or next((n for n, d in DRIVERS.items() if d.kind == target.kind),
                                   None)
        if name not in DRIVERS or DRIVERS[name].kind != target.kind:
            raise UserError(f"stack {self.stack!r}{f' on {name}' if name else ''} cannot "
                            f"talk to {target.kind} targets")
        self.driver_name = name
        self.driver_spec = DRIVERS[name]
        self.admin_stack = self.driver_spec.admin_stack
        if importlib.util.find_spec(name) is None:  # the module is named as its package
            raise MissingDependencyError(
                f"stack {self.stack!r} needs {name} on {target.kind} targets, which is "
                f"not installed (pip install 'dbstand[sqlalchemy,{target.kind}]')")
        self.dialect = dialect_for(target.kind)
        self.table = kv_table(f"{prefix}kv")
        self.engine: AsyncEngine | None = None
        self.conn: AsyncConnection | None = None

    async def connect(self) -> None:
        t = self.target
        url = self.driver_spec.url(self.driver_spec.url_driver, t)
        self.engine = create_async_engine(url, isolation_level="AUTOCOMMIT", pool_size=1,
                                          max_overflow=0,
                                          connect_args=dict(self.driver_spec.connect_args))
        try:
            self.conn = await self.engine.connect()
        except Exception as exc:  # DBAPIError wrapping the driver's error, OSError...
            await self.engine.dispose()
            self.engine = None
            raise connect_error(getattr(exc, "orig", None) or exc, t) from None

    async def close(self) -> None:
        try:
            if self.conn is not None:
                await self.conn.close()
        finally:
            self.conn = None
            if self.engine is not None:
                await self.engine.dispose()
                self.engine = None

    def statement(self, op: str) -> Any:
        """The Core construct of `op` (bind names k: id, v: name)."""
        t = self.table
        k: Any = bindparam("k")
        v: Any = bindparam("v")
        if op == "select":
            return select(t.c.id, t.c.name).where(t.c.id == k)
        if op == "insert":
            return t.insert().values(name=v)
        if op == "update":
            return update(t).where(t.c.id == k).values(name=v)
        if op == "delete":
            return delete(t).where(t.c.id == k)
        if op not in ("upsert", "replace"):
            raise CaseFailed(f"unknown kv operation {op!r}")
        clause = self.dialect.upsert_clause if op == "upsert" else self.dialect.replace_clause
        if clause == "on_conflict":
            stmt = pg_insert(t).values(id=k, name=v)
            columns = ("name",) if op == "upsert" else ("id", "name")
            return stmt.on_conflict_do_update(
                index_elements=[t.c.id],
                set_={c: getattr(stmt.excluded, c) for c in columns})
        if clause == "on_duplicate_key":
            my_stmt = mysql_insert(t).values(id=k, name=v)
            return my_stmt.on_duplicate_key_update(name=my_stmt.inserted.name)
        if clause == "replace_into":
            return Replace(t).values(id=k, name=v)
        raise CaseFailed(f"sqlalchemy-async builds no {clause} clause ({op})")

    def sql(self, op: str) -> str:
        """The SQL `op` renders on this target (for tests and records)."""
        assert self.engine is not None, "connect() first"
        return str(self.statement(op).compile(dialect=self.engine.dialect))

    def operation(self, op: str) -> AsyncOp:
        if self.conn is None:
            raise CaseFailed("sqlalchemy-async: operation() before connect()")
        stmt = self.statement(op)
        to_params = _PARAMS[op]
        execute = self.conn.execute
        if op == "select":

            async def select_one(params: Any) -> object:
                return (await execute(stmt, to_params(params))).first()

            return select_one

        async def write(params: Any) -> object:
            return await execute(stmt, to_params(params))

        return write

    def forms(self) -> dict[str, str]:
        return dict(self.dialect.forms)

    def describe(self) -> str:
        driver = f"{self.driver_name} {importlib.metadata.version(self.driver_name)}"
        how = self.driver_spec.statements
        return (f"SQLAlchemy {sqlalchemy.__version__} Core on AsyncEngine "
                f"({self.driver_spec.url_driver}, {driver}), AUTOCOMMIT: one transaction per "
                f"statement; {how}")
