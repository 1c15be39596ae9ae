"""One connection of a stack running scripts: statements with bound parameters, the
script's BEGIN/END as the driver's transaction calls, and the interpreter loop that
runs one transaction (one operation) per call, timing each statement as pgbench -r.

A session per connection keeps its own counters (no sharing between threads); the
workload merges them after the case.
"""

from __future__ import annotations

import asyncio
import importlib
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dbstand.errors import CaseFailed
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.url import TargetURL
from dbstand.workloads.script.expr import Env, ExprError
from dbstand.workloads.script.parse import Command, Script

clock = time.perf_counter_ns


@dataclass
class StatementStats:
    """Per command of each script: executions and summed ns; transactions per script."""

    counts: dict[tuple[int, int], int] = field(default_factory=dict)
    total_ns: dict[tuple[int, int], int] = field(default_factory=dict)
    transactions: dict[int, int] = field(default_factory=dict)

    def merge(self, other: StatementStats) -> None:
        for key, n in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + n
            self.total_ns[key] = self.total_ns.get(key, 0) + other.total_ns.get(key, 0)
        for s, n in other.transactions.items():
            self.transactions[s] = self.transactions.get(s, 0) + n


def _placeholders(style: str, n: int) -> list[str]:
    from dbstand.sql.paramstyle import placeholder

    return [placeholder(style, i) for i in range(1, n + 1)]


def _advance(c: Command, pc: int, entering: bool, env: Env, rng: random.Random
             ) -> tuple[int, bool, int]:
    """A meta command: (next pc, whether the next arm is entered by a jump, sleep ns)."""
    kind = c.kind
    assert c.expr is not None or kind in ("else", "endif")
    if kind == "set":
        assert c.expr is not None
        env[c.var] = c.expr(env, rng)
        return pc + 1, False, 0
    if kind == "if" or (kind == "elif" and entering):
        assert c.expr is not None
        value = c.expr(env, rng)
        return (pc + 1, False, 0) if value else (c.next_arm, True, 0)
    if kind in ("elif", "else"):
        return (pc + 1, False, 0) if entering and kind == "else" else (c.end, False, 0)
    if kind == "sleep":
        assert c.expr is not None
        value = c.expr(env, rng)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ExprError(f"\\sleep needs a number, got {value!r}")
        return pc + 1, False, int(value * c.unit_ns)
    return pc + 1, False, 0  # endif


class _Runner:
    """What sync and async sessions share: the scripts, variables, the weighted choice."""

    style: ClassVar[str] = "format"

    def __init__(self, scripts: Sequence[Script], defines: dict[str, Any], seed: int):
        self.scripts = list(scripts)
        self.defines = dict(defines)
        self.rng = random.Random(seed)
        self.weights = [s.weight for s in self.scripts]
        self.stats = StatementStats()
        escape = self.style in ("format", "pyformat")
        self.sql = [[c.sql(_placeholders(self.style, len(c.params)), escape)
                     if c.kind == "sql" else "" for c in s.commands] for s in self.scripts]

    def choose(self) -> int:
        if len(self.scripts) == 1:
            return 0
        return self.rng.choices(range(len(self.scripts)), self.weights)[0]

    def failed(self, script: Script, c: Command, exc: BaseException) -> CaseFailed:
        text = " ".join(str(exc).split()) or type(exc).__name__
        return CaseFailed(f"{script.name}:{c.line}: {text}")

    def count(self, s: int, pc: int, ns: int) -> None:
        key = (s, pc)
        self.stats.counts[key] = self.stats.counts.get(key, 0) + 1
        self.stats.total_ns[key] = self.stats.total_ns.get(key, 0) + ns


class SyncSession(_Runner, ABC):
    """A DB-API connection in autocommit; BEGIN/COMMIT/ROLLBACK sent as statements
    unless a subclass maps them to the driver's calls."""

    stack: ClassVar[str] = ""
    is_async: ClassVar[bool] = False
    conn: Any = None

    @abstractmethod
    def open(self, target: TargetURL) -> None:
        """Open this driver's connection in autocommit (each subclass its own)."""

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            conn.close()

    def tx(self, what: str) -> None:
        self.conn.cursor().execute(what.upper())

    def operation(self, _arg: object) -> None:
        """One transaction of the mix."""
        s = self.choose()
        script = self.scripts[s]
        sql = self.sql[s]
        env: Env = dict(self.defines)
        cmds = script.commands
        cur = self.conn.cursor()
        pc, entering = 0, False
        try:
            while pc < len(cmds):
                c = cmds[pc]
                if c.kind == "sql":
                    t0 = clock()
                    if c.tx:
                        self.tx(c.tx)
                    else:
                        cur.execute(sql[pc], [env[p] for p in c.params])
                        if cur.description is not None:
                            cur.fetchall()
                    self.count(s, pc, clock() - t0)
                    pc += 1
                    continue
                self.count(s, pc, 0)
                pc, entering, sleep_ns = _advance(c, pc, entering, env, self.rng)
                if sleep_ns:
                    time.sleep(sleep_ns / 1e9)
        except KeyError as exc:
            raise self.failed(script, cmds[pc], ExprError(f"undefined variable :{exc.args[0]}")
                              ) from None
        except CaseFailed:
            raise
        except Exception as exc:
            raise self.failed(script, cmds[pc], exc) from None
        finally:
            cur.close()
        self.stats.transactions[s] = self.stats.transactions.get(s, 0) + 1


class AsyncSession(_Runner, ABC):
    """An asyncio connection; `run_sql` and `tx` are the driver's."""

    stack: ClassVar[str] = ""
    is_async: ClassVar[bool] = True
    conn: Any = None

    async def open(self, target: TargetURL) -> None:
        try:
            self.conn = await self.connect(target)
        except Exception as exc:
            raise connect_error(exc, target) from None

    @abstractmethod
    async def connect(self, target: TargetURL) -> Any:
        """This driver's connection, in autocommit (each subclass its own)."""

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            await conn.close()

    @abstractmethod
    async def run_sql(self, sql: str, params: list[Any]) -> None:
        """Execute one statement and read its rows."""

    async def tx(self, what: str) -> None:
        await self.run_sql(what.upper(), [])

    async def operation(self, _arg: object) -> None:
        s = self.choose()
        script = self.scripts[s]
        sql = self.sql[s]
        env: Env = dict(self.defines)
        cmds = script.commands
        pc, entering = 0, False
        try:
            while pc < len(cmds):
                c = cmds[pc]
                if c.kind == "sql":
                    t0 = clock()
                    if c.tx:
                        await self.tx(c.tx)
                    else:
                        await self.run_sql(sql[pc], [env[p] for p in c.params])
                    self.count(s, pc, clock() - t0)
                    pc += 1
                    continue
                self.count(s, pc, 0)
                pc, entering, sleep_ns = _advance(c, pc, entering, env, self.rng)
                if sleep_ns:
                    await asyncio.sleep(sleep_ns / 1e9)
        except KeyError as exc:
            raise self.failed(script, cmds[pc], ExprError(f"undefined variable :{exc.args[0]}")
                              ) from None
        except CaseFailed:
            raise
        except Exception as exc:
            raise self.failed(script, cmds[pc], exc) from None
        self.stats.transactions[s] = self.stats.transactions.get(s, 0) + 1


def open_sync(make: Callable[[int], SyncSession], target: TargetURL, n: int
              ) -> list[SyncSession]:
    """N open sessions (`make(i)` builds the i-th); all closed again if one fails."""
    sessions: list[SyncSession] = []
    try:
        for i in range(n):
            session = make(i)
            session.open(target)
            sessions.append(session)
    except BaseException:
        for s in sessions:
            s.close()
        raise
    return sessions


def open_async(make: Callable[[int], AsyncSession], target: TargetURL, n: int,
               loop_name: str) -> tuple[asyncio.AbstractEventLoop, list[AsyncSession]]:
    """A new event loop with N open asyncio sessions in it; on failure, all closed."""
    from dbstand.modes.executors import new_event_loop

    loop = new_event_loop(loop_name)
    sessions: list[AsyncSession] = []

    async def open_all() -> None:
        for i in range(n):
            session = make(i)
            await session.open(target)
            sessions.append(session)

    try:
        loop.run_until_complete(open_all())
    except BaseException:
        for s in sessions:
            loop.run_until_complete(s.close())
        loop.close()
        raise
    return loop, sessions


def _driver(name: str) -> Any:
    return importlib.import_module(f"dbstand.drivers.{name}")


class _DbapiSession(SyncSession):
    driver: ClassVar[str] = ""

    def open(self, target: TargetURL) -> None:
        try:
            self.conn = _driver(self.driver).connect(target)
        except Exception as exc:
            raise connect_error(exc, target) from None


class PsycopgSession(_DbapiSession):
    stack, driver, style = "psycopg", "psycopg", "format"


class Psycopg2Session(_DbapiSession):
    stack, driver, style = "psycopg2", "psycopg2", "format"


class Pg8000Session(_DbapiSession):
    stack, driver, style = "pg8000", "pg8000", "format"


class Sqlite3Session(_DbapiSession):
    stack, driver, style = "sqlite3", "sqlite3", "qmark"


class _MysqlSession(_DbapiSession):
    """MariaDB has no END: the script's transaction control is the driver's calls."""

    def tx(self, what: str) -> None:
        if what == "begin":
            self.conn.begin()
        elif what == "commit":
            self.conn.commit()
        else:
            self.conn.rollback()


class PymysqlSession(_MysqlSession):
    stack, driver, style = "pymysql", "pymysql", "format"


class MysqlclientSession(_MysqlSession):
    stack, driver, style = "mysqlclient", "mysqlclient", "format"

    def tx(self, what: str) -> None:  # MySQLdb has no begin(): START TRANSACTION
        if what == "begin":
            self.conn.query("START TRANSACTION")
        else:
            super().tx(what)


class AsyncpgSession(AsyncSession):
    """asyncpg: `$n` parameters, its statement cache (prepared statements)."""

    stack, style = "asyncpg", "dollar"

    async def connect(self, target: TargetURL) -> Any:
        return await _driver("asyncpg").connect(target)

    async def run_sql(self, sql: str, params: list[Any]) -> None:
        await self.conn.fetch(sql, *params)


class PsycopgAsyncSession(AsyncSession):
    stack, style = "psycopg-async", "format"

    async def connect(self, target: TargetURL) -> Any:
        conn = await _driver("psycopg").connect_async(target)
        self.cur = conn.cursor()
        return conn

    async def run_sql(self, sql: str, params: list[Any]) -> None:
        await self.cur.execute(sql, params)
        if self.cur.description is not None:
            await self.cur.fetchall()


class AiomysqlSession(AsyncSession):
    stack, style = "aiomysql", "format"

    async def connect(self, target: TargetURL) -> Any:
        return await _driver("aiomysql").connect(target)

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            conn.close()

    async def run_sql(self, sql: str, params: list[Any]) -> None:
        async with self.conn.cursor() as cur:
            await cur.execute(sql, params)
            if cur.description is not None:
                await cur.fetchall()

    async def tx(self, what: str) -> None:
        if what == "begin":
            await self.conn.begin()
        elif what == "commit":
            await self.conn.commit()
        else:
            await self.conn.rollback()
