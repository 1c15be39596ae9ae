"""python-sqlalchemy: the parking service on SQLAlchemy's ORM, written the way the
ORM is used in applications (and the way the study's service used it).

Mapped classes with relationships (Order.product, Payment.order, Order.receipts,
AccountConsume.account, ...); one Session per request (`Session.begin()`: commit, or
roll back when the function raises); objects are loaded, changed in Python and
written by the unit of work at flush (autoflush before a query, and at commit), new
rows are linked through relationships rather than ids; locking reads use
`with_for_update()` (with `joinedload(..., innerjoin=True)` where a row and its parent
are locked together; SQLite's compiler leaves FOR UPDATE out, and BEGIN IMMEDIATE
serializes writers there). Lazy loads, identity-map hits and flush ordering are the
ORM's own, so the statements per request are what SQLAlchemy issues, not a copy of
the hand-written SQL. Statement logging is SQLAlchemy's own (`sqlalchemy.engine`).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import (
    DeclarativeBase,
    Session,
    joinedload,
    mapped_column,
    relationship,
    sessionmaker,
)

from dbstand.drivers.endpoint import endpoint
from dbstand.targets.sqlite.path import path_of
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db, pricing
from dbstand.workloads.parking.protocol import (
    TICKETS,
    Answer,
    Call,
    Reply,
    check_payable,
    payment_terms,
    refusal,
    success,
)
from dbstand.workloads.parking.schema import table_name
from dbstand.workloads.parking.values import money_text, to_money, to_ts, ts_text, unix_seconds

ZERO = Decimal(0)
_random = random.SystemRandom()


class Money(sa.TypeDecorator[Decimal]):
    """decimal(16,6); text on SQLite (exact there too, as schema.py stores it)."""

    impl = sa.Numeric(16, 6)
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
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

    def load_dialect_impl(self, dialect: sa.Dialect) -> Any:
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
        product = relationship(Product)
        receipts = relationship("AccountReceipt", back_populates="order")

        @property
        def plate_session(self) -> bool:
            """A session without ticket: it holds a place while paid."""
            return self.ticket_number is None and bool(self.plate_number)

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
        order = relationship(Order)

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
        account = relationship(Account)
        order = relationship(Order, back_populates="receipts")

    class AccountConsume(Base):
        __tablename__ = table_name(prefix, "account_consume")
        id = mapped_column(ID, primary_key=True)
        ts = mapped_column(Stamp, nullable=False)
        account_id = ref("account")
        dst_payment_id = ref("payment")
        amount = mapped_column(Money, nullable=False)
        is_reserved = mapped_column(sa.Integer, nullable=False)
        account = relationship(Account)
        payment = relationship(Payment)

    class AccountTransfer(Base):
        __tablename__ = table_name(prefix, "account_transfer")
        id = mapped_column(ID, primary_key=True)
        ts = mapped_column(Stamp, nullable=False)
        trans_number = mapped_column(sa.String(64), unique=True, nullable=False)
        src_account_id = ref("account")
        dst_account_id = ref("account")
        amount = mapped_column(Money, nullable=False)
        src = relationship(Account, foreign_keys=[src_account_id])
        dst = relationship(Account, foreign_keys=[dst_account_id])

    return SimpleNamespace(Product=Product, Order=Order, Payment=Payment, Account=Account,
                           AccountReceipt=AccountReceipt, AccountConsume=AccountConsume,
                           AccountTransfer=AccountTransfer)


class ParkingApi:
    """The ten functions, each on the request's Session."""

    def __init__(self, models: SimpleNamespace):
        self.m = models

    # --- helpers -------------------------------------------------------------------
    def _account_for_update(self, s: Session, user_eid: str) -> Any:
        Account = self.m.Account
        account = s.scalars(sa.select(Account).filter_by(user_eid=user_eid)
                            .with_for_update()).one_or_none()
        if account is None:
            account = Account(user_eid=user_eid, balance=ZERO, reserved=ZERO)
            s.add(account)
        return account

    def _payment_for_update(self, s: Session, call: Call) -> Any:
        """The payment of the call's transaction_id with its order, both locked."""
        trans = call.param("transaction_id")
        if not trans:
            return None
        Payment = self.m.Payment
        return s.scalars(sa.select(Payment).filter_by(trans_number=trans)
                         .options(joinedload(Payment.order, innerjoin=True))
                         .with_for_update()).one_or_none()

    def _ticket_order(self, s: Session, product: Any, ticket: str, *, lock: bool) -> Any:
        query = sa.select(self.m.Order).filter_by(product=product, ticket_number=ticket)
        order = s.scalars(query.with_for_update() if lock else query).one_or_none()
        if order is None:
            raise refusal("user_ticket_not_found")
        if order.finish_ts is not None:
            raise refusal("user_ticket_out_of_parking")
        return order

    def _settle_consume(self, s: Session, payment: Any, *, spend: bool) -> None:
        """Balance reserved for the payment: spent when it is paid, released when it is
        cancelled."""
        Consume = self.m.AccountConsume
        consume = s.scalars(sa.select(Consume).filter_by(payment=payment, is_reserved=1)
                            .options(joinedload(Consume.account, innerjoin=True))
                            .with_for_update()).one_or_none()
        if consume is None:
            return
        consume.account.reserved -= consume.amount
        if spend:
            consume.account.balance -= consume.amount
        else:
            consume.amount = ZERO
        consume.is_reserved = 0

    @staticmethod
    def _session_minutes(call: Call) -> int:
        minutes = pricing.session_minutes(call.version, call.field("duration"))
        if minutes is None:
            raise refusal("invalid_duration")
        return minutes

    # --- the functions -----------------------------------------------------------------
    def get_service_info(self, s: Session, call: Call) -> Answer:
        user_id = call.param("user_id")
        if call.version >= 1 and not user_id:
            raise refusal("invalid_user_id")
        if call.version == 1 and not call.field("plate"):
            raise refusal("invalid_registration_plate")
        name = call.field("parking")
        product = s.scalars(sa.select(self.m.Product).filter_by(name=name)).one_or_none() \
            if name else None
        if product is None:
            raise refusal("invalid_parking_id")
        ticket = call.field("ticket")
        order = self._ticket_order(s, product, ticket, lock=False) if ticket else None
        if order is not None:
            start, hourly = order.start_ts, order.price
            minutes = pricing.ticket_minutes(order.start_ts, order.paid_until_ts, call.now)
        else:
            start, hourly, minutes = call.now, product.price, self._session_minutes(call)
        info: dict[str, Any] = {"available_places": product.places_avail}
        if call.version >= 1:
            info["start_ts"] = f"{unix_seconds(start)}.000"
            info["duration"] = minutes
            if order is not None:
                info["paid_duration"] = pricing.minutes_between(order.start_ts,
                                                                order.paid_until_ts)
        if call.version >= 2:
            account = s.scalars(sa.select(self.m.Account)
                                .filter_by(user_eid=user_id)).one_or_none()
            info["balance"] = pricing.fmt_money(account.balance if account else ZERO)
        return success(price=pricing.fmt_money(pricing.cost(minutes, hourly)), info=info)

    def create_reservation(self, s: Session, call: Call) -> Answer:
        m = self.m
        user_id = call.param("user_id")
        if call.version >= 1 and not user_id:
            raise refusal("invalid_user_id")
        ticket, plate = call.field("ticket"), call.field("plate")
        if not plate and (call.version >= 1 or not ticket):
            raise refusal("invalid_registration_plate")
        name = call.field("parking")
        product = s.scalars(sa.select(m.Product).filter_by(name=name)
                            .with_for_update()).one_or_none() if name else None
        if product is None:
            raise refusal("invalid_parking_id")
        price, from_balance, trans = payment_terms(call)
        existing = s.scalars(sa.select(m.Payment).filter_by(trans_number=trans)).one_or_none()
        if existing is not None:
            if ("no-idempotent-replay" not in call.broken and existing.amount == price
                    and existing.order.product is product):
                raise Reply("success")
            raise Reply("bad_transaction")
        if ticket:
            order = self._ticket_order(s, product, ticket, lock=True)
            hourly = order.price
            minutes = pricing.ticket_minutes(order.start_ts, order.paid_until_ts, call.now)
        else:
            order, hourly, minutes = None, product.price, self._session_minutes(call)
        total = pricing.cost(minutes, hourly)
        if total != price and "skip-price-check" not in call.broken:
            raise Reply("wrong_price")
        if order is None:
            if product.places_avail <= 0:  # a ticket holder is inside already
                raise Reply("not_available")
            order = m.Order(product=product, user_eid=user_id or None, plate_number=plate,
                            start_ts=call.now, paid_until_ts=call.now, paid_amount=ZERO)
        payment = m.Payment(order=order, trans_number=trans, ts=call.now,
                            hours=pricing.hours_of(minutes), amount=price)
        s.add(payment)
        if from_balance > 0:
            if not user_id:
                raise refusal("invalid_user_id")
            account = self._account_for_update(s, user_id)
            if account.balance - account.reserved < from_balance:
                raise Reply("not_available")
            s.add(m.AccountConsume(account=account, payment=payment, ts=call.now,
                                   amount=from_balance, is_reserved=1))
            account.reserved += from_balance
        answer = success()
        if call.version >= 1:
            info: dict[str, Any] = {"start_ts": f"{unix_seconds(order.start_ts)}.000",
                                    "duration": minutes}
            if ticket:
                info["paid_duration"] = 0
            answer.update(price=pricing.fmt_money(total), info=info)
        return answer

    def pay_reservation(self, s: Session, call: Call) -> Answer:
        payment = self._payment_for_update(s, call)
        if payment is None:
            raise Reply("bad_transaction")
        check_payable(call, paid=payment.payment_ts is not None,
                      cancelled=payment.cancel_ts is not None)
        order = payment.order
        payment.payment_ts = call.now
        order.paid_amount += payment.amount
        order.paid_until_ts += pricing.hours_delta(payment.hours)
        if order.plate_session and order.finish_ts is None and order.paid_until_ts > call.now:
            product = s.get_one(self.m.Product, order.product_id, with_for_update=True)
            product.places_avail -= 1
        self._settle_consume(s, payment, spend=True)
        return success()

    def cancel_reservation(self, s: Session, call: Call) -> Answer:
        payment = self._payment_for_update(s, call)
        if payment is None:
            raise Reply("bad_transaction")
        if payment.cancel_ts is not None:
            raise Reply("success")
        order = payment.order
        payment.cancel_ts = call.now
        if payment.payment_ts is not None:
            order.paid_amount -= payment.amount
            order.paid_until_ts -= pricing.hours_delta(payment.hours)
            if (order.plate_session and order.finish_ts is None
                    and order.paid_until_ts <= call.now):
                order.finish_ts = call.now
                product = s.get_one(self.m.Product, order.product_id, with_for_update=True)
                product.places_avail += 1
        elif order.ticket_number is None and order.finish_ts is None:
            order.finish_ts = call.now  # a ticket's car is still inside: not finished
        self._settle_consume(s, payment, spend=False)
        return success()

    def stop_service(self, s: Session, call: Call) -> Answer:
        payment = self._payment_for_update(s, call)
        if payment is None or payment.payment_ts is None or payment.cancel_ts is not None:
            raise Reply("bad_transaction")
        order = payment.order
        if order.ticket_number is not None:
            raise Reply("bad_transaction")
        if order.receipts:
            raise Reply("success", delta_amount=pricing.fmt_money(order.receipts[0].amount))
        if order.paid_until_ts <= call.now:
            raise Reply("success", delta_amount="0.00")
        if not order.user_eid:
            raise Reply("bad_transaction")  # no account to credit (a v0 session without user)
        delta = pricing.refund(order.paid_amount, order.start_ts, order.paid_until_ts,
                               call.now)
        account = self._account_for_update(s, order.user_eid)
        s.add(self.m.AccountReceipt(account=account, order=order, ts=call.now, amount=delta))
        account.balance += delta
        order.paid_amount -= delta
        order.paid_until_ts = call.now
        return success(delta_amount=pricing.fmt_money(delta))

    def get_user_account(self, s: Session, call: Call) -> Answer:
        user_id = call.param("user_id")
        if not user_id:
            raise Reply("bad_transaction")
        account = s.scalars(sa.select(self.m.Account).filter_by(user_eid=user_id)).one_or_none()
        return success(balance=pricing.fmt_money(account.balance if account else ZERO))

    def account_transfer(self, s: Session, call: Call) -> Answer:
        m = self.m
        trans, src_eid, dst_eid = (call.param(n) for n in
                                   ("transaction_id", "src_user_id", "dst_user_id"))
        if not (trans and src_eid and dst_eid):
            raise Reply("bad_transaction")
        # both accounts locked by one query, in user id order (no deadlock between
        # opposite transfers); missing ones created
        eids = sorted({src_eid, dst_eid})
        accounts = {a.user_eid: a for a in s.scalars(
            sa.select(m.Account).where(m.Account.user_eid.in_(eids))
            .order_by(m.Account.user_eid).with_for_update())}
        for eid in eids:
            if eid not in accounts:
                accounts[eid] = m.Account(user_eid=eid, balance=ZERO, reserved=ZERO)
                s.add(accounts[eid])
        src, dst = accounts[src_eid], accounts[dst_eid]
        if src is dst:
            raise Reply("bad_transaction", "same_src_and_dst")
        done = s.scalars(sa.select(m.AccountTransfer)
                         .filter_by(trans_number=trans)).one_or_none()
        if done is not None:
            if done.src is src and done.dst is dst:
                raise Reply("success", "already_done")
            raise Reply("bad_transaction", "another_trans_exists")
        if src.balance <= 0:
            raise Reply("success", "nothing_to_transfer")
        if src.reserved != 0:
            raise Reply("not_available", "reserved_funds_present")
        amount = src.balance
        dst.balance += amount
        src.balance = ZERO
        s.add(m.AccountTransfer(src=src, dst=dst, trans_number=trans, ts=call.now,
                                amount=amount))
        return success()

    def issue_ticket(self, s: Session, call: Call) -> Answer:
        m = self.m
        name = call.param("parking_id")
        product = s.scalars(sa.select(m.Product).filter_by(name=name)
                            .with_for_update()).one_or_none() if name else None
        if product is None or product.places_avail <= 0:
            raise Reply("not_available")
        while True:
            ticket = str(_random.randint(*TICKETS))
            taken = s.scalars(sa.select(m.Order.id)
                              .filter_by(product_id=product.id, ticket_number=ticket)).first()
            if taken is None:
                break
        s.add(m.Order(product=product, ticket_number=ticket, start_ts=call.now,
                      paid_until_ts=call.now, paid_amount=ZERO, price=product.price))
        product.places_avail -= 1
        return success(user_ticket=ticket, available_places=product.places_avail)

    def leave_parking(self, s: Session, call: Call) -> Answer:
        m = self.m
        name, ticket = call.param("parking_id"), call.param("user_ticket")
        product = s.scalars(sa.select(m.Product).filter_by(name=name)
                            .with_for_update()).one_or_none() if name and ticket else None
        if product is None:
            raise Reply("not_available")
        orders = s.scalars(sa.select(m.Order).filter_by(product=product, ticket_number=ticket,
                                                        finish_ts=None)
                           .with_for_update()).all()
        if len(orders) != 1:
            raise Reply("not_available")
        order = orders[0]
        if (pricing.never_paid(order.start_ts, order.paid_until_ts)
                or call.now >= order.paid_until_ts + pricing.GRACE):
            raise Reply("not_enough_paid")
        order.finish_ts = call.now
        product.places_avail += 1
        return success()

    def check_plate_number(self, s: Session, call: Call) -> Answer:
        plate = call.param("registration_plate")
        if not plate:
            raise Reply("not_available")
        Order = self.m.Order
        paid = s.scalar(sa.select(sa.func.count()).select_from(Order).where(
            Order.plate_number == plate, Order.paid_until_ts > call.now,
            Order.finish_ts.is_(None)))
        return success(paid="true" if paid else "false")


def engine_url(target: TargetURL) -> sa.URL:
    if target.kind == "sqlite":
        return sa.URL.create("sqlite+pysqlite", database=path_of(target))
    if target.kind == "postgresql":
        return sa.URL.create(f"postgresql+{db.driver_name('postgresql')}",
                             username=target.user, password=target.password,
                             host=target.host, port=endpoint(target).port,
                             database=target.database or target.user)
    from dbstand.drivers.mysql_args import connect_args

    args = connect_args(target)
    return sa.URL.create("mysql+pymysql", username=args["user"], password=args["password"],
                         host=args["host"], port=args["port"], database=args["database"],
                         query={"charset": "utf8mb4"})


def _connect_args(target: TargetURL) -> dict[str, Any]:
    if target.kind == "sqlite":
        return {"check_same_thread": False, "timeout": 30}
    if target.kind == "postgresql" and db.driver_name("postgresql") == "pg8000":
        return {"timeout": 10}
    return {"connect_timeout": 10}


class SqlAlchemyService:
    """An Engine with one pooled connection per server thread; a Session per request."""

    stack = "python-sqlalchemy"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        self.engine = sa.create_engine(engine_url(target), pool_size=threads, max_overflow=0,
                                       connect_args=_connect_args(target))
        if target.kind == "sqlite":
            _immediate_transactions(self.engine)
        self.api = ParkingApi(build_models(prefix))
        self.sessions = sessionmaker(self.engine)

    def call(self, name: str, call: Call) -> Answer:
        with self.sessions.begin() as session:
            answer: Answer = getattr(self.api, name)(session, call)
            return answer

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
