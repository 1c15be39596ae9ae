"""The registry of stacks: name, targets, packages, and where the adapter lives.

Adapters are imported lazily, so listing stacks or failing on an unknown one never
needs a driver to be installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass, replace
from typing import Any

from dbstand.errors import MissingDependencyError, UserError


@dataclass(frozen=True)
class StackSpec:
    """A stack under test as users name it."""

    name: str
    targets: tuple[str, ...]          # target kinds it can talk to
    packages: tuple[str, ...]         # pip distributions it needs
    modules: tuple[str, ...]          # importable modules proving they are installed
    adapters: dict[str, str]          # workload -> "module:Class" implementing it
    description: str
    extra: str | None = None          # dbstand extra that installs it
    is_async: bool = False            # its operations are coroutines (asyncio modes)
    protocols: tuple[str, ...] = ()   # wire protocols it offers (`tarantool[sql]`), 1st default
    drivers: tuple[str, ...] = ()     # driver stacks it can sit on (`sqlalchemy-orm+psycopg2`)
    protocol: str | None = None       # set on a variant: the protocol chosen
    driver: str | None = None         # set on a variant: the driver chosen

    def talks_to(self, target: Any) -> bool:
        """Whether the stack can use `target`: its kind, or a kind speaking the wire
        protocol and SQL of one it knows (the kind's `dialect`, e.g. CockroachDB)."""
        return target.kind in self.targets or target.dialect in self.targets

    @property
    def workloads(self) -> tuple[str, ...]:
        return tuple(self.adapters)

    def missing_modules(self) -> list[str]:
        missing = []
        for module in self.modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                missing.append(module)
        return missing

    @property
    def installed(self) -> bool:
        return not self.missing_modules()

    def versions(self) -> dict[str, str]:
        out = {}
        for package in self.packages:
            try:
                out[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                out[package] = "builtin" if package == "sqlite3" else "missing"
        return out

    def require(self) -> None:
        """Raise one clear error if the driver is not importable."""
        missing = self.missing_modules()
        if missing:
            hint = f"pip install 'dbstand[{self.extra}]'" if self.extra else \
                f"pip install {' '.join(self.packages)}"
            raise MissingDependencyError(
                f"stack {self.name!r} needs {', '.join(self.packages)}, which is not "
                f"installed ({hint})")

    def load(self, workload: str) -> Any:
        """The adapter class implementing `workload` for this stack."""
        if workload not in self.adapters:
            raise UserError(f"stack {self.name!r} does not implement the {workload} workload "
                            f"(it does: {', '.join(self.adapters) or 'nothing yet'})")
        self.require()
        module_name, _, attr = self.adapters[workload].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise MissingDependencyError(
                f"stack {self.name!r} cannot load its driver: {exc}") from None
        cls = getattr(module, attr)
        if self.protocol is None and self.driver is None:
            return cls
        # a variant: the adapter learns its protocol / driver from class attributes,
        # so that every mode (threads, worker processes) builds the same client
        settings = {k: v for k, v in (("protocol", self.protocol), ("driver", self.driver))
                    if v is not None}
        return type(cls.__name__, (cls,), {"__module__": cls.__module__, **settings})

    def variant(self, protocol: str | None = None, driver: str | None = None) -> StackSpec:
        """This stack on one protocol and/or driver, named `base+driver[protocol]`."""
        spec = self
        if driver is not None and driver != self.driver:
            if driver not in self.drivers:
                raise UserError(f"stack {self.name!r} cannot sit on driver {driver!r} "
                                f"(it can: {', '.join(self.drivers) or 'none'})")
            under = get_stack(driver)
            spec = replace(spec, driver=driver,
                           targets=tuple(k for k in spec.targets if k in under.targets),
                           packages=spec.packages + under.packages,
                           modules=spec.modules + under.modules)
        if protocol is not None and protocol != self.protocol:
            if protocol not in self.protocols:
                raise UserError(f"stack {self.name!r} has no protocol {protocol!r} "
                                f"(it has: {', '.join(self.protocols) or 'none'})")
            spec = replace(spec, protocol=protocol)
        base = self.name.split("+")[0].split("[")[0]
        name = base + (f"+{spec.driver}" if spec.driver else "") + \
            (f"[{spec.protocol}]" if spec.protocol else "")
        return replace(spec, name=name)

    def for_target(self, kind: str) -> StackSpec:
        """With drivers and none chosen: the variant on the default driver for `kind`
        (the first of `drivers` that talks to it); otherwise this spec."""
        if not self.drivers or self.driver is not None:
            return self
        from dbstand.targets.kinds import get_kind

        dialect = get_kind(kind).dialect
        for driver in self.drivers:
            if kind in get_stack(driver).targets or dialect in get_stack(driver).targets:
                return self.variant(driver=driver)
        return self


#: drivers the SQLAlchemy stacks can sit on; the first per target kind is the default
_SQLALCHEMY_DRIVERS = ("sqlite3", "psycopg", "pymysql", "psycopg2", "pg8000", "mysqlclient",
                       "mysql-connector-python")

STACKS: dict[str, StackSpec] = {
    spec.name: spec
    for spec in (
        StackSpec("sqlite3", ("sqlite",), ("sqlite3",), ("sqlite3",),
                  {"kv": "dbstand.workloads.kv.adapters.sqlite3:Sqlite3Kv",
                   "script": "dbstand.workloads.script.sessions:Sqlite3Session",
                   "batch": "dbstand.workloads.batch.adapters.sqlite3:Sqlite3Batch"},
                  "Python's built-in sqlite3 module (autocommit)"),
        StackSpec("psycopg", ("postgresql",), ("psycopg", "psycopg-binary"), ("psycopg",),
                  {"kv": "dbstand.workloads.kv.adapters.psycopg:PsycopgKv",
                   "script": "dbstand.workloads.script.sessions:PsycopgSession",
                   "batch": "dbstand.workloads.batch.adapters.psycopg:PsycopgBatch"},
                  "psycopg 3, C implementation; server-side prepare after 5 executions "
                  "(its default prepare_threshold)", extra="postgresql"),
        StackSpec("psycopg2", ("postgresql",), ("psycopg2-binary",), ("psycopg2",),
                  {"kv": "dbstand.workloads.kv.adapters.psycopg2:Psycopg2Kv",
                   "script": "dbstand.workloads.script.sessions:Psycopg2Session",
                   "batch": "dbstand.workloads.batch.adapters.psycopg2:Psycopg2Batch"},
                  "psycopg2 (libpq, client-side parameter interpolation)",
                  extra="postgresql"),
        StackSpec("pg8000", ("postgresql",), ("pg8000",), ("pg8000",),
                  {"kv": "dbstand.workloads.kv.adapters.pg8000:Pg8000Kv",
                   "script": "dbstand.workloads.script.sessions:Pg8000Session"},
                  "pg8000, pure Python, DB-API interface (unnamed prepared statements)",
                  extra="postgresql"),
        StackSpec("pymysql", ("mysql",), ("PyMySQL",), ("pymysql",),
                  {"kv": "dbstand.workloads.kv.adapters.pymysql:PyMySqlKv",
                   "script": "dbstand.workloads.script.sessions:PymysqlSession",
                   "batch": "dbstand.workloads.batch.adapters.mysql:PyMySqlBatch"},
                  "PyMySQL, pure Python MySQL/MariaDB driver", extra="mysql"),
        StackSpec("mysqlclient", ("mysql",), ("mysqlclient",), ("MySQLdb",),
                  {"kv": "dbstand.workloads.kv.adapters.mysqlclient:MysqlclientKv",
                   "script": "dbstand.workloads.script.sessions:MysqlclientSession",
                   "batch": "dbstand.workloads.batch.adapters.mysql:MysqlclientBatch"},
                  "mysqlclient (MySQLdb), C extension over libmariadb", extra="mysql"),
        StackSpec("asyncpg", ("postgresql",), ("asyncpg",), ("asyncpg",),
                  {"batch": "dbstand.workloads.batch.adapters.asyncpg:AsyncpgBatch",
                   "kv": "dbstand.workloads.kv.adapters.asyncpg:AsyncpgKv",
                   "script": "dbstand.workloads.script.sessions:AsyncpgSession"},
                  "asyncpg, asyncio PostgreSQL driver (binary protocol, prepared statements)",
                  extra="postgresql", is_async=True),
        StackSpec("psycopg-async", ("postgresql",), ("psycopg", "psycopg-binary"),
                  ("psycopg",),
                  {"kv": "dbstand.workloads.kv.adapters.psycopg_async:PsycopgAsyncKv",
                   "script": "dbstand.workloads.script.sessions:PsycopgAsyncSession"},
                  "psycopg 3 AsyncConnection, autocommit; server-side prepare after 5 "
                  "executions (its default prepare_threshold)",
                  extra="postgresql", is_async=True),
        StackSpec("aiomysql", ("mysql",), ("aiomysql", "PyMySQL"), ("aiomysql",),
                  {"kv": "dbstand.workloads.kv.adapters.aiomysql:AiomysqlKv",
                   "script": "dbstand.workloads.script.sessions:AiomysqlSession"},
                  "aiomysql, PyMySQL's protocol on asyncio, autocommit (client-side "
                  "parameter interpolation)", extra="mysql", is_async=True),
        StackSpec("asynctnt", ("tarantool",), ("asynctnt",), ("asynctnt",),
                  {"kv": "dbstand.workloads.kv.adapters.asynctnt:AsynctntKv"},
                  "asynctnt, asyncio Tarantool connector (Cython); many coroutines "
                  "share one connection; binary protocol or SQL (prepared)",
                  extra="tarantool", is_async=True, protocols=("binary", "sql")),
        StackSpec("sqlalchemy-async", ("postgresql", "mysql"), ("SQLAlchemy", "greenlet"),
                  ("sqlalchemy", "greenlet"),
                  {"kv": "dbstand.workloads.kv.adapters.sqlalchemy_async:SqlalchemyAsyncKv"},
                  "SQLAlchemy 2.1 Core on AsyncEngine over an asyncio driver (default: "
                  "asyncpg, aiomysql; `sqlalchemy-async+DRIVER` picks one), AUTOCOMMIT",
                  extra="sqlalchemy", is_async=True, drivers=("asyncpg", "aiomysql")),
        StackSpec("mysql-connector-python", ("mysql",), ("mysql-connector-python",),
                  ("mysql.connector",),
                  {"kv": "dbstand.workloads.kv.adapters.mysql_connector:MysqlConnectorKv"},
                  "Oracle's MySQL driver (C extension if it loads, else pure Python); "
                  "text protocol or server-side prepared statements",
                  extra="mysql", protocols=("text", "prepared")),
        StackSpec("tarantool", ("tarantool",), ("tarantool",), ("tarantool",),
                  {"kv": "dbstand.workloads.kv.adapters.tarantool:TarantoolKv"},
                  "tarantool-python, pure Python; binary protocol (space requests) or "
                  "SQL through execute (not prepared: no prepare API)",
                  extra="tarantool", protocols=("binary", "sql")),
        StackSpec("sqlalchemy-core", ("sqlite", "postgresql", "mysql"), ("SQLAlchemy",),
                  ("sqlalchemy",),
                  {"kv": "dbstand.workloads.kv.adapters.sqlalchemy_core:SqlAlchemyCoreKv",
                   "batch": "dbstand.workloads.batch.adapters.sqlalchemy:SqlAlchemyCoreBatch"},
                  "SQLAlchemy Core statements over a DB-API driver (default: sqlite3, "
                  "psycopg, pymysql; `sqlalchemy-core+DRIVER` picks one), AUTOCOMMIT",
                  extra="sqlalchemy", drivers=_SQLALCHEMY_DRIVERS),
        StackSpec("sqlalchemy-orm", ("sqlite", "postgresql", "mysql"), ("SQLAlchemy",),
                  ("sqlalchemy",),
                  {"kv": "dbstand.workloads.kv.adapters.sqlalchemy_orm:SqlAlchemyOrmKv",
                   "batch": "dbstand.workloads.batch.adapters.sqlalchemy:SqlAlchemyOrmBatch"},
                  "SQLAlchemy ORM: a Session and mapped objects per operation, over a "
                  "DB-API driver (`sqlalchemy-orm+DRIVER`), AUTOCOMMIT",
                  extra="sqlalchemy", drivers=_SQLALCHEMY_DRIVERS),
        StackSpec("pgbench", ("postgresql",), ("psycopg",), ("psycopg",),
                  {"kv": "dbstand.workloads.kv.adapters.pgbench:PgbenchKv",
                   "script": "dbstand.workloads.script.pgbench:PgbenchScriptExecutor"},
                  "the limit row: PostgreSQL's pgbench (C, libpq) running kv's select and "
                  "update from a custom script, or the script workload's files; -M simple "
                  "or -M prepared",
                  extra="postgresql", protocols=("simple", "prepared")),
    )
}


_VARIANT = re.compile(r"^(?P<base>[A-Za-z0-9_.-]+)(?:\+(?P<driver>[A-Za-z0-9_.-]+))?"
                      r"(?:\[(?P<protocol>[A-Za-z0-9_-]+)\])?$")


def get_stack(name: str) -> StackSpec:
    """A stack by name; `base+driver` and `base[protocol]` name its variants."""
    if name in STACKS:
        return STACKS[name]
    match = _VARIANT.match(name)
    if match is None or match["base"] not in STACKS or not (match["driver"]
                                                             or match["protocol"]):
        raise UserError(f"unknown stack {name!r} (known: {', '.join(STACKS)})")
    return STACKS[match["base"]].variant(protocol=match["protocol"], driver=match["driver"])


def register(spec: StackSpec) -> None:
    """Add a stack (used by modules that bring their own stacks)."""
    STACKS[spec.name] = spec
