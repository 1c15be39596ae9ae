"""What SQLAlchemy Core and ORM stacks share: the driver underneath and the engine.

SQLAlchemy sits on a DB-API driver that is itself a dbstand stack (`psycopg`,
`pymysql`, `sqlite3`...), chosen by the stack name's `+driver` suffix or by the
target kind. The driver's own kv client opens the connection (same timeouts, errors
and passwords as the bare driver) and does the untimed data management; the
SQLAlchemy engine wraps that very connection, so the bare-driver and the SQLAlchemy
cases differ by SQLAlchemy alone. Like the DB-API stacks, the connection runs in
autocommit (`isolation_level="AUTOCOMMIT"`): each operation is its own transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy
from sqlalchemy import BigInteger, Column, Integer, MetaData, String, Table
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from dbstand.errors import CaseFailed
from dbstand.sql.bulk import Loaded, Progress
from dbstand.targets.url import TargetURL
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.kv.client import KvClient
from dbstand.workloads.kv.dbapi import DbApiKvClient

#: driver stack -> SQLAlchemy dialect+driver name
DIALECTS = {
    "sqlite3": "sqlite+pysqlite",
    "psycopg": "postgresql+psycopg",
    "psycopg2": "postgresql+psycopg2",
    "pg8000": "postgresql+pg8000",
    "pymysql": "mysql+pymysql",
    "mysqlclient": "mysql+mysqldb",
    "mysql-connector-python": "mysql+mysqlconnector",
}

#: the id column: BIGINT where the kv table has BIGINT, INTEGER PRIMARY KEY on SQLite
ID_TYPE = BigInteger().with_variant(Integer(), "sqlite")


def kv_table(name: str, metadata: MetaData | None = None) -> Table:
    return Table(name, metadata or MetaData(),
                 Column("id", ID_TYPE, primary_key=True, autoincrement=True),
                 Column("name", String(64), nullable=False))


class SqlAlchemyKvBase(KvClient):
    """Connection, engine and data management for the SQLAlchemy stacks."""

    #: the driver stack, set by `sqlalchemy-core+psycopg2`-style names; else by target
    driver: str | None = None
    layer = "Core"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        driver = self.driver or get_stack(self.stack).for_target(target.kind).driver
        if driver not in DIALECTS:
            raise CaseFailed(f"{self.stack}: no SQLAlchemy driver for {target.kind} targets")
        self.driver_name: str = driver
        self.dialect_name = DIALECTS[driver]
        self.helper: DbApiKvClient = get_stack(driver).load("kv")(target, prefix)
        self.table_name = self.helper.table
        self.engine: Engine | None = None
        self.sa: Connection | None = None

    @property
    def conn(self) -> Any:
        """The DB-API connection underneath (what in-process probes attach to)."""
        return self.helper.conn

    def connect(self) -> None:
        self.helper.connect()
        helper = self.helper
        self.engine = sqlalchemy.create_engine(
            f"{self.dialect_name}://", creator=lambda: helper.conn, poolclass=StaticPool,
            isolation_level="AUTOCOMMIT", pool_reset_on_return=None,
            skip_autocommit_rollback=True)
        # the first checkout runs the dialect's initialisation queries: untimed, here
        self.sa = self.engine.connect()
        self._setup()

    def _setup(self) -> None:
        """Build statements / mappings once the engine exists."""

    def close(self) -> None:
        if self.sa is not None:
            self.sa.close()
            self.sa = None
        if self.engine is not None:
            self.engine.dispose(close=False)  # the driver client closes the connection
            self.engine = None
        self.helper.close()

    def describe(self) -> str:
        return (f"SQLAlchemy {sqlalchemy.__version__} {self.layer} over {self.driver_name} "
                f"({self.dialect_name}), isolation_level=AUTOCOMMIT")

    def details(self) -> dict[str, Any]:
        return {"driver": self.driver_name, "dialect": self.dialect_name}

    def server_facts(self) -> dict[str, Any]:
        return self.helper.server_facts()

    # --- untimed data management, through the driver's own client -------------
    def check_ownership(self) -> None:
        self.helper.check_ownership()

    def create_table(self) -> None:
        self.helper.create_table()

    def drop_table(self) -> None:
        self.helper.drop_table()

    def fill(self, rows: Iterable[tuple[int, str]],
             progress: Progress | None = None) -> Loaded:
        return self.helper.fill(rows, progress)

    def restore(self, rows: Iterable[tuple[int, str]]) -> None:
        self.helper.restore(rows)

    def count(self, where: str = "", params: Sequence[Any] = ()) -> int:
        return self.helper.count(where, params)

    def fetch(self, key: int) -> tuple[int, str] | None:
        return self.helper.fetch(key)

    def delete_above(self, max_id: int) -> None:
        self.helper.delete_above(max_id)
