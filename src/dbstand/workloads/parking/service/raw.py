"""python-raw: plain DB-API SQL (sqlite3, psycopg 3, PyMySQL), explicit transactions.

Each request is BEGIN (BEGIN IMMEDIATE on SQLite, which serializes writers) ...
COMMIT/ROLLBACK on the thread's own connection; locking reads are SELECT ... FOR
UPDATE except on SQLite. With logging on, every statement and its parameters go to
the `dbstand.workloads.parking.sql` logger, as the study's SQLAlchemy echo did.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db, schema
from dbstand.workloads.parking.protocol import Answer, Reply
from dbstand.workloads.parking.values import db_money, db_ts, to_money, to_ts

sql_log = logging.getLogger("dbstand.workloads.parking.sql")


class Record(SimpleNamespace):
    """A row as a mutable object; `_entity` names its table."""


class Cursor:
    """A DB-API cursor speaking `?` placeholders, converting values, logging if asked."""

    def __init__(self, conn: Any, kind: str, log: bool):
        self.cur = conn.cursor()
        self.kind = kind
        self.style = db.PARAMSTYLES[kind]
        self.log = log

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        sql = to_paramstyle(sql, self.style)
        if self.log:
            sql_log.info("%s %r", sql, tuple(params))
        self.cur.execute(sql, tuple(params))

    def fetchone(self) -> Any:
        return self.cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self.cur.fetchall()

    @property
    def lastrowid(self) -> int:
        return int(self.cur.lastrowid)


class RawRepo:
    """repo.Repo over one cursor inside a transaction."""

    def __init__(self, cur: Cursor, prefix: str):
        self.cur = cur
        self.kind = cur.kind
        self.tables = schema.tables(prefix)
        self.for_update = "" if self.kind == "sqlite" else " FOR UPDATE"

    # --- conversions -----------------------------------------------------------
    def _record(self, key: str, row: Sequence[Any]) -> Record:
        entity = schema.ENTITY[key]
        money, stamps = entity.of_type("money"), entity.of_type("ts")
        values = {}
        for name, value in zip(entity.names, row, strict=True):
            if value is not None and name in money:
                value = to_money(value)
            elif value is not None and name in stamps:
                value = to_ts(value)
            values[name] = value
        return Record(_entity=key, **values)

    def _param(self, key: str, name: str, value: Any) -> Any:
        entity = schema.ENTITY[key]
        if name in entity.of_type("money"):
            return db_money(self.kind, value)
        if name in entity.of_type("ts"):
            return db_ts(self.kind, value)
        return value

    # --- reads -------------------------------------------------------------------
    def _select(self, key: str, where: str, params: Sequence[Any], lock: bool) -> list[Record]:
        cols = ", ".join(schema.ENTITY[key].names)
        suffix = self.for_update if lock else ""
        self.cur.execute(f"SELECT {cols} FROM {self.tables[key]} WHERE {where}{suffix}", params)
        return [self._record(key, row) for row in self.cur.fetchall()]

    def _one(self, key: str, where: str, params: Sequence[Any], lock: bool) -> Record | None:
        rows = self._select(key, where, params, lock)
        return rows[0] if rows else None

    def product(self, name: str, *, lock: bool) -> Record | None:
        return self._one("product", "name = ?", (name,), lock)

    def product_by_id(self, product_id: int, *, lock: bool) -> Record:
        return self._select("product", "id = ?", (product_id,), lock)[0]

    def order_by_id(self, order_id: int, *, lock: bool) -> Record:
        return self._select("order", "id = ?", (order_id,), lock)[0]

    def order_by_ticket(self, product_id: int, ticket: str, *, lock: bool) -> Record | None:
        return self._one("order", "product_id = ? AND ticket_number = ?",
                         (product_id, ticket), lock)

    def open_orders_by_ticket(self, product_id: int, ticket: str, *,
                              lock: bool) -> list[Record]:
        return self._select("order", "product_id = ? AND ticket_number = ? "
                            "AND finish_ts IS NULL", (product_id, ticket), lock)

    def ticket_taken(self, product_id: int, ticket: str) -> bool:
        self.cur.execute(f"SELECT 1 FROM {self.tables['order']} "
                         "WHERE product_id = ? AND ticket_number = ?", (product_id, ticket))
        return self.cur.fetchone() is not None

    def paid_plate_orders(self, plate: str, now: dt.datetime) -> int:
        self.cur.execute(f"SELECT count(*) FROM {self.tables['order']} WHERE plate_number = ? "
                         "AND paid_until_ts > ? AND finish_ts IS NULL",
                         (plate, db_ts(self.kind, now)))
        return int(self.cur.fetchone()[0])

    def payment(self, trans_number: str, *, lock: bool) -> Record | None:
        return self._one("payment", "trans_number = ?", (trans_number,), lock)

    def consume_for(self, payment_id: int, *, lock: bool) -> Record | None:
        return self._one("account_consume", "dst_payment_id = ?", (payment_id,), lock)

    def account(self, user_eid: str, *, lock: bool) -> Record | None:
        return self._one("account", "user_eid = ?", (user_eid,), lock)

    def account_by_id(self, account_id: int, *, lock: bool) -> Record:
        return self._select("account", "id = ?", (account_id,), lock)[0]

    def receipt_for(self, order_id: int) -> Record | None:
        return self._one("account_receipt", "src_order_id = ?", (order_id,), False)

    def transfer(self, trans_number: str) -> Record | None:
        return self._one("account_transfer", "trans_number = ?", (trans_number,), False)

    # --- writes ------------------------------------------------------------------
    def add(self, entity: str, **values: Any) -> Record:
        names = list(values)
        sql = (f"INSERT INTO {self.tables[entity]} ({', '.join(names)}) "
               f"VALUES ({', '.join('?' * len(names))})")
        params = [self._param(entity, n, values[n]) for n in names]
        if self.kind == "postgresql":
            self.cur.execute(sql + " RETURNING id", params)
            new_id = int(self.cur.fetchone()[0])
        else:
            self.cur.execute(sql, params)
            new_id = self.cur.lastrowid
        return Record(_entity=entity, id=new_id, **values)

    def save(self, entity: Record, *fields: str) -> None:
        key = entity._entity
        sets = ", ".join(f"{name} = ?" for name in fields)
        params = [self._param(key, n, getattr(entity, n)) for n in fields]
        self.cur.execute(f"UPDATE {self.tables[key]} SET {sets} WHERE id = ?",
                         [*params, entity.id])


class RawBackend:
    """Per-thread connections; one explicit transaction per request."""

    stack = "python-raw"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        self.target = target
        self.prefix = prefix
        self.log_sql = log_sql
        self.begin = "BEGIN IMMEDIATE" if target.kind == "sqlite" else "BEGIN"
        self._local = threading.local()
        self._conns: list[Any] = []
        self._lock = threading.Lock()

    def _cursor(self) -> Cursor:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            conn = db.connect(self.target)
            with self._lock:
                self._conns.append(conn)
            cur = self._local.cur = Cursor(conn, self.target.kind, self.log_sql)
        return cur

    def _forget(self) -> None:
        """Drop a connection that failed: the next request opens a fresh one."""
        cur = getattr(self._local, "cur", None)
        self._local.cur = None
        if cur is not None:
            with contextlib.suppress(Exception):
                cur.cur.connection.close()

    def run(self, work: Callable[[RawRepo], Answer]) -> Answer:
        cur = self._cursor()
        try:
            cur.execute(self.begin)
            answer = work(RawRepo(cur, self.prefix))
            cur.execute("COMMIT")
            return answer
        except Reply:
            cur.execute("ROLLBACK")
            raise
        except BaseException:
            try:
                cur.execute("ROLLBACK")
            except Exception:
                self._forget()
            raise

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(Exception):
                    conn.close()
            self._conns.clear()
