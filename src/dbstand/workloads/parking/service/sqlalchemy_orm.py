"""python-sqlalchemy: the SQLAlchemy 2 ORM, as the study used it: mapped classes,
one Session per request (`session.begin()`: commit or roll back), locking reads with
`with_for_update()` (not on SQLite, where BEGIN IMMEDIATE serializes writers), and
the unit of work writing changed attributes at flush. Statement logging is
SQLAlchemy's own (the `sqlalchemy.engine` logger that echo=True uses).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Session, mapped_column, sessionmaker

from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db
from dbstand.workloads.parking.protocol import Answer
from dbstand.workloads.parking.schema import table_name
from dbstand.workloads.parking.values import money_text, to_money, to_ts, ts_text


class Money(sa.TypeDecorator[Decimal]):
    """decimal(16,6); text on SQLite (exact there too, as schema.py stores it)."""

    impl = sa.Numeric(16, 6)
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.String(32))
        return dialect.type_descriptor(sa.Numeric(16, 6, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        return money_text(value) if dialect.name == "sqlite" else Decimal(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Decimal | None:
        return None if value is None else to_money(value)


class Stamp(sa.TypeDecorator[dt.datetime]):
    """A whole-second timestamp; "YYYY-MM-DD HH:MM:SS" text on SQLite."""

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.String(19))
        return dialect.type_descriptor(sa.DateTime())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        return ts_text(value) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> dt.datetime | None:
        return None if value is None else to_ts(value)


ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def build_models(prefix: str) -> SimpleNamespace:
    """Mapped classes for the tables of `prefix` (names are known at run time only)."""

    class Base(DeclarativeBase):
        pass

    def ref(entity: str) -> Any:
        return mapped_column(ID, sa.ForeignKey(f"{table_name(prefix, entity)}.id"),
                             nullable=False)

    class Product(Base):
        __tablename__ = table_name(prefix, "product")
        id = mapped_column(ID, primary_key=True)
        name = mapped_column(sa.String(100), unique=True, nullable=False)
        display_name = mapped_column(sa.String(200))
        places_avail = mapped_column(sa.Integer, nullable=False)
        price = mapped_column(Money, nullable=False)

    class Order(Base):
        __tablename__ = table_name(prefix, "order")
        id = mapped_column(ID, primary_key=True)
        product_id = ref("product")
        user_eid = mapped_column(sa.String(64))
        ticket_number = mapped_column(sa.String(32))
        plate_number = mapped_column(sa.String(32))
        start_ts = mapped_column(Stamp, nullable=False)
        paid_until_ts = mapped_column(Stamp, nullable=False)
        finish_ts = mapped_column(Stamp)
        paid_amount = mapped_column(Money, nullable=False)
        price = mapped_column(Money)

    class Payment(Base):
        __tablename__ = table_name(prefix, "payment")
        id = mapped_column(ID, primary_key=True)
        trans_number = mapped_column(sa.String(64), unique=True, nullable=False)
        order_id = ref("order")
        ts = mapped_column(Stamp, nullable=False)
        hours = mapped_column(Money, nullable=False)
        amount = mapped_column(Money, nullable=False)
        payment_ts = mapped_column(Stamp)
        cancel_ts = mapped_column(Stamp)

    class Account(Base):
        __tablename__ = table_name(prefix, "account")
        id = mapped_column(ID, primary_key=True)
        user_eid = mapped_column(sa.String(64), unique=True, nullable=False)
        balance = mapped_column(Money, nullable=False)
        reserved = mapped_column(Money, nullable=False)

    class AccountReceipt(Base):
        __tablename__ = table_name(prefix, "account_receipt")
        id = mapped_column(ID, primary_key=True)
        ts = mapped_column(Stamp, nullable=False)
        account_id = ref("account")
        src_order_id = ref("order")
        amount = mapped_column(Money, nullable=False)

    class AccountConsume(Base):
        __tablename__ = table_name(prefix, "account_consume")
        id = mapped_column(ID, primary_key=True)
        ts = mapped_column(Stamp, nullable=False)
        account_id = ref("account")
        dst_payment_id = ref("payment")
        amount = mapped_column(Money, nullable=False)
        is_reserved = mapped_column(sa.Integer, nullable=False)

    class AccountTransfer(Base):
        __tablename__ = table_name(prefix, "account_transfer")
        id = mapped_column(ID, primary_key=True)
        ts = mapped_column(Stamp, nullable=False)
        trans_number = mapped_column(sa.String(64), unique=True, nullable=False)
        src_account_id = ref("account")
        dst_account_id = ref("account")
        amount = mapped_column(Money, nullable=False)

    return SimpleNamespace(product=Product, order=Order, payment=Payment, account=Account,
                           account_receipt=AccountReceipt, account_consume=AccountConsume,
                           account_transfer=AccountTransfer)


class OrmRepo:
    """repo.Repo over one Session inside its transaction."""

    def __init__(self, session: Session, models: SimpleNamespace, locks: bool):
        self.s = session
        self.m = models
        self.locks = locks

    def _scalars(self, stmt: Any, lock: bool) -> Any:
        if lock and self.locks:
            stmt = stmt.with_for_update()
        return self.s.scalars(stmt)

    def _get(self, cls: Any, key: int, lock: bool) -> Any:
        return self.s.get(cls, key, with_for_update=True if lock and self.locks else None)

    def product(self, name: str, *, lock: bool) -> Any | None:
        P = self.m.product
        return self._scalars(sa.select(P).where(P.name == name), lock).one_or_none()

    def product_by_id(self, product_id: int, *, lock: bool) -> Any:
        return self._get(self.m.product, product_id, lock)

    def order_by_id(self, order_id: int, *, lock: bool) -> Any:
        return self._get(self.m.order, order_id, lock)

    def order_by_ticket(self, product_id: int, ticket: str, *, lock: bool) -> Any | None:
        Ord = self.m.order
        stmt = sa.select(Ord).where(Ord.product_id == product_id, Ord.ticket_number == ticket)
        return self._scalars(stmt, lock).one_or_none()

    def open_orders_by_ticket(self, product_id: int, ticket: str, *, lock: bool) -> list[Any]:
        Ord = self.m.order
        stmt = sa.select(Ord).where(Ord.product_id == product_id, Ord.ticket_number == ticket,
                                  Ord.finish_ts.is_(None))
        return list(self._scalars(stmt, lock))

    def ticket_taken(self, product_id: int, ticket: str) -> bool:
        Ord = self.m.order
        stmt = sa.select(Ord.id).where(Ord.product_id == product_id, Ord.ticket_number == ticket)
        return self.s.scalars(stmt).first() is not None

    def paid_plate_orders(self, plate: str, now: dt.datetime) -> int:
        Ord = self.m.order
        stmt = sa.select(sa.func.count()).select_from(Ord).where(
            Ord.plate_number == plate, Ord.paid_until_ts > now, Ord.finish_ts.is_(None))
        return int(self.s.scalar(stmt) or 0)

    def payment(self, trans_number: str, *, lock: bool) -> Any | None:
        P = self.m.payment
        return self._scalars(sa.select(P).where(P.trans_number == trans_number),
                             lock).one_or_none()

    def consume_for(self, payment_id: int, *, lock: bool) -> Any | None:
        C = self.m.account_consume
        return self._scalars(sa.select(C).where(C.dst_payment_id == payment_id),
                             lock).first()

    def account(self, user_eid: str, *, lock: bool) -> Any | None:
        A = self.m.account
        return self._scalars(sa.select(A).where(A.user_eid == user_eid), lock).one_or_none()

    def account_by_id(self, account_id: int, *, lock: bool) -> Any:
        return self._get(self.m.account, account_id, lock)

    def receipt_for(self, order_id: int) -> Any | None:
        R = self.m.account_receipt
        return self.s.scalars(sa.select(R).where(R.src_order_id == order_id)).first()

    def transfer(self, trans_number: str) -> Any | None:
        T = self.m.account_transfer
        return self.s.scalars(sa.select(T).where(T.trans_number == trans_number)).first()

    def add(self, entity: str, **values: Any) -> Any:
        obj = getattr(self.m, entity)(**values)
        self.s.add(obj)
        self.s.flush()  # the rules need its id
        return obj

    def save(self, entity: Any, *fields: str) -> None:
        """Nothing to do: the unit of work writes changed attributes at flush."""


def engine_url(target: TargetURL) -> sa.URL:
    if target.kind == "sqlite":
        return sa.URL.create("sqlite+pysqlite", database=db.sqlite_path(target))
    if target.kind == "postgresql":
        return sa.URL.create("postgresql+psycopg", username=target.user,
                             password=target.password, host=target.host,
                             port=target.port or 5432, database=target.database or target.user)
    from dbstand.targets.mysql.managed import connect_args

    args = connect_args(target)
    return sa.URL.create("mysql+pymysql", username=args["user"], password=args["password"],
                         host=args["host"], port=args["port"], database=args["database"],
                         query={"charset": "utf8mb4"})


class SqlAlchemyBackend:
    """An Engine with one pooled connection per server thread; a Session per request."""

    stack = "python-sqlalchemy"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        sqlite = target.kind == "sqlite"
        connect_args: dict[str, Any] = ({"check_same_thread": False, "timeout": 30}
                                        if sqlite else {"connect_timeout": 10})
        self.engine = sa.create_engine(engine_url(target), pool_size=threads, max_overflow=0,
                                       connect_args=connect_args)
        if sqlite:
            _immediate_transactions(self.engine)
        self.models = build_models(prefix)
        self.locks = not sqlite
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def run(self, work: Callable[[OrmRepo], Answer]) -> Answer:
        with self.sessions() as session, session.begin():
            return work(OrmRepo(session, self.models, self.locks))

    def close(self) -> None:
        self.engine.dispose()


def _immediate_transactions(engine: sa.Engine) -> None:
    """SQLite: let SQLAlchemy emit BEGIN IMMEDIATE itself (the driver's own implicit
    BEGIN is turned off), so a request holds the write lock from its first read."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA busy_timeout = 30000")

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
