"""python-peewee: the Peewee ORM: models, `db.atomic()` per request (IMMEDIATE on
SQLite, which serializes writers), locking reads with `.for_update()` elsewhere,
`save(only=...)` for changed fields. Statement logging is Peewee's own (the
`peewee` logger at DEBUG: each query with its parameters).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import peewee as pw

from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db
from dbstand.workloads.parking.protocol import Answer
from dbstand.workloads.parking.schema import table_name
from dbstand.workloads.parking.values import money_text, to_money, to_ts, ts_text


def build_models(peewee_db: pw.Database, prefix: str) -> SimpleNamespace:
    """Models for the tables of `prefix` on `peewee_db` (names known at run time only)."""
    sqlite = isinstance(peewee_db, pw.SqliteDatabase)

    class Money(pw.DecimalField):
        """decimal(16,6); text on SQLite (exact there too, as schema.py stores it)."""

        def db_value(self, value: Any) -> Any:
            if value is None:
                return None
            return money_text(value) if sqlite else Decimal(value)

        def python_value(self, value: Any) -> Decimal | None:
            return None if value is None else to_money(value)

    class Stamp(pw.DateTimeField):
        """A whole-second timestamp; "YYYY-MM-DD HH:MM:SS" text on SQLite."""

        def db_value(self, value: Any) -> Any:
            if value is None:
                return None
            return ts_text(value) if sqlite else value

        def python_value(self, value: Any) -> dt.datetime | None:
            return None if value is None else to_ts(value)

    def money(null: bool = False) -> Money:
        return Money(max_digits=16, decimal_places=6, null=null)

    class Base(pw.Model):
        id = pw.BigAutoField()

        class Meta:
            database = peewee_db

    def meta(key: str) -> dict[str, Any]:
        return {"Meta": type("Meta", (), {"table_name": table_name(prefix, key)})}

    product = type("Product", (Base,), {
        "name": pw.CharField(100, unique=True), "display_name": pw.CharField(200, null=True),
        "places_avail": pw.IntegerField(), "price": money(), **meta("product")})
    order = type("Order", (Base,), {
        "product_id": pw.BigIntegerField(), "user_eid": pw.CharField(64, null=True),
        "ticket_number": pw.CharField(32, null=True),
        "plate_number": pw.CharField(32, null=True), "start_ts": Stamp(),
        "paid_until_ts": Stamp(), "finish_ts": Stamp(null=True), "paid_amount": money(),
        "price": money(null=True), **meta("order")})
    payment = type("Payment", (Base,), {
        "trans_number": pw.CharField(64, unique=True), "order_id": pw.BigIntegerField(),
        "ts": Stamp(), "hours": money(), "amount": money(), "payment_ts": Stamp(null=True),
        "cancel_ts": Stamp(null=True), **meta("payment")})
    account = type("Account", (Base,), {
        "user_eid": pw.CharField(64, unique=True), "balance": money(), "reserved": money(),
        **meta("account")})
    receipt = type("AccountReceipt", (Base,), {
        "ts": Stamp(), "account_id": pw.BigIntegerField(), "src_order_id": pw.BigIntegerField(),
        "amount": money(), **meta("account_receipt")})
    consume = type("AccountConsume", (Base,), {
        "ts": Stamp(), "account_id": pw.BigIntegerField(),
        "dst_payment_id": pw.BigIntegerField(), "amount": money(),
        "is_reserved": pw.IntegerField(), **meta("account_consume")})
    transfer = type("AccountTransfer", (Base,), {
        "ts": Stamp(), "trans_number": pw.CharField(64, unique=True),
        "src_account_id": pw.BigIntegerField(), "dst_account_id": pw.BigIntegerField(),
        "amount": money(), **meta("account_transfer")})
    return SimpleNamespace(product=product, order=order, payment=payment, account=account,
                           account_receipt=receipt, account_consume=consume,
                           account_transfer=transfer)


class PeeweeRepo:
    """repo.Repo over Peewee models inside `atomic()`."""

    def __init__(self, models: SimpleNamespace, locks: bool):
        self.m = models
        self.locks = locks

    def _first(self, query: pw.ModelSelect, lock: bool) -> Any | None:
        if lock and self.locks:
            query = query.for_update()
        return query.first()

    def product(self, name: str, *, lock: bool) -> Any | None:
        P = self.m.product
        return self._first(P.select().where(P.name == name), lock)

    def product_by_id(self, product_id: int, *, lock: bool) -> Any:
        P = self.m.product
        return self._first(P.select().where(P.id == product_id), lock)

    def order_by_id(self, order_id: int, *, lock: bool) -> Any:
        Ord = self.m.order
        return self._first(Ord.select().where(Ord.id == order_id), lock)

    def order_by_ticket(self, product_id: int, ticket: str, *, lock: bool) -> Any | None:
        Ord = self.m.order
        query = Ord.select().where((Ord.product_id == product_id) & (Ord.ticket_number == ticket))
        return self._first(query, lock)

    def open_orders_by_ticket(self, product_id: int, ticket: str, *, lock: bool) -> list[Any]:
        Ord = self.m.order
        query = Ord.select().where((Ord.product_id == product_id) & (Ord.ticket_number == ticket)
                                 & Ord.finish_ts.is_null())
        if lock and self.locks:
            query = query.for_update()
        return list(query)

    def ticket_taken(self, product_id: int, ticket: str) -> bool:
        Ord = self.m.order
        return Ord.select(Ord.id).where((Ord.product_id == product_id)
                                    & (Ord.ticket_number == ticket)).exists()

    def paid_plate_orders(self, plate: str, now: dt.datetime) -> int:
        Ord = self.m.order
        return Ord.select().where((Ord.plate_number == plate) & (Ord.paid_until_ts > now)
                                & Ord.finish_ts.is_null()).count()

    def payment(self, trans_number: str, *, lock: bool) -> Any | None:
        P = self.m.payment
        return self._first(P.select().where(P.trans_number == trans_number), lock)

    def consume_for(self, payment_id: int, *, lock: bool) -> Any | None:
        C = self.m.account_consume
        return self._first(C.select().where(C.dst_payment_id == payment_id), lock)

    def account(self, user_eid: str, *, lock: bool) -> Any | None:
        A = self.m.account
        return self._first(A.select().where(A.user_eid == user_eid), lock)

    def account_by_id(self, account_id: int, *, lock: bool) -> Any:
        A = self.m.account
        return self._first(A.select().where(A.id == account_id), lock)

    def receipt_for(self, order_id: int) -> Any | None:
        R = self.m.account_receipt
        return R.select().where(R.src_order_id == order_id).first()

    def transfer(self, trans_number: str) -> Any | None:
        T = self.m.account_transfer
        return T.select().where(T.trans_number == trans_number).first()

    def add(self, entity: str, **values: Any) -> Any:
        return getattr(self.m, entity).create(**values)

    def save(self, entity: Any, *fields: str) -> None:
        model = type(entity)
        entity.save(only=[model._meta.fields[name] for name in fields])


def database(target: TargetURL) -> pw.Database:
    """The Peewee database of `target` (thread-local connections, opened lazily)."""
    if target.kind == "sqlite":
        return pw.SqliteDatabase(db.sqlite_path(target), timeout=30,
                                 pragmas={"busy_timeout": 30000}, check_same_thread=False)
    if target.kind == "postgresql":
        from playhouse.psycopg3_ext import Psycopg3Database

        return Psycopg3Database(target.database or target.user, host=target.host,
                                port=target.port or 5432, user=target.user,
                                password=target.password, connect_timeout=10)
    from dbstand.targets.mysql.managed import connect_args

    args = connect_args(target)
    return pw.MySQLDatabase(args.pop("database"), charset="utf8mb4", connect_timeout=10,
                            **args)


class PeeweeBackend:
    """One Peewee database (a connection per server thread); atomic() per request."""

    stack = "python-peewee"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        self.db = database(target)
        self.sqlite = target.kind == "sqlite"
        self.models = build_models(self.db, prefix)

    def run(self, work: Callable[[PeeweeRepo], Answer]) -> Answer:
        atomic = self.db.atomic("IMMEDIATE") if self.sqlite else self.db.atomic()
        with atomic:
            return work(PeeweeRepo(self.models, locks=not self.sqlite))

    def close(self) -> None:
        self.db.close()
