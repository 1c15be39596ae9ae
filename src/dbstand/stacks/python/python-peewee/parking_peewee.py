"""python-peewee: the parking service on Peewee, written the way Peewee is used in
applications.

Models with ForeignKeyFields (Order.product, Payment.order, AccountConsume.payment,
...); `db.atomic()` per request (IMMEDIATE on SQLite, which serializes writers);
`Model.create()` inserts at once, `instance.save()` writes the whole row, a foreign
key followed (`payment.order`) is a query of its own; counters shared by every
request (a park's places) use Peewee's atomic updates (`Product.update(places_avail=
Product.places_avail - 1)`), rows whose new value is computed in Python are read
with `.for_update()` first (where the database has it: Peewee refuses FOR UPDATE on
SQLite). Statement logging is Peewee's own (the `peewee` logger at DEBUG).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import peewee as pw

from dbstand.drivers.endpoint import endpoint
from dbstand.targets.sqlite.path import path_of
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import pricing
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
from dbstand.workloads.parking.schema import tables
from dbstand.workloads.parking.values import money_text, to_money, to_ts, ts_text, unix_seconds

ZERO = Decimal(0)
_random = random.SystemRandom()


def build_models(peewee_db: pw.Database, prefix: str) -> SimpleNamespace:
    """Models for the tables of `prefix` on `peewee_db` (names known at run time only)."""
    sqlite = isinstance(peewee_db, pw.SqliteDatabase)
    names = tables(prefix)

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

    class Product(Base):
        name = pw.CharField(100, unique=True)
        display_name = pw.CharField(200, null=True)
        places_avail = pw.IntegerField()
        price = money()

        class Meta:
            table_name = names["product"]

    class Order(Base):
        product = pw.ForeignKeyField(Product, column_name="product_id", backref="orders")
        user_eid = pw.CharField(64, null=True)
        ticket_number = pw.CharField(32, null=True)
        plate_number = pw.CharField(32, null=True)
        start_ts = Stamp()
        paid_until_ts = Stamp()
        finish_ts = Stamp(null=True)
        paid_amount = money()
        price = money(null=True)

        class Meta:
            table_name = names["order"]

        @property
        def plate_session(self) -> bool:
            """A session without ticket: it holds a place while paid."""
            return self.ticket_number is None and bool(self.plate_number)

    class Payment(Base):
        trans_number = pw.CharField(64, unique=True)
        order = pw.ForeignKeyField(Order, column_name="order_id", backref="payments")
        ts = Stamp()
        hours = money()
        amount = money()
        payment_ts = Stamp(null=True)
        cancel_ts = Stamp(null=True)

        class Meta:
            table_name = names["payment"]

    class Account(Base):
        user_eid = pw.CharField(64, unique=True)
        balance = money()
        reserved = money()

        class Meta:
            table_name = names["account"]

    class AccountReceipt(Base):
        ts = Stamp()
        account = pw.ForeignKeyField(Account, column_name="account_id", backref="+")
        order = pw.ForeignKeyField(Order, column_name="src_order_id", backref="receipts")
        amount = money()

        class Meta:
            table_name = names["account_receipt"]

    class AccountConsume(Base):
        ts = Stamp()
        account = pw.ForeignKeyField(Account, column_name="account_id", backref="+")
        payment = pw.ForeignKeyField(Payment, column_name="dst_payment_id", backref="+")
        amount = money()
        is_reserved = pw.IntegerField()

        class Meta:
            table_name = names["account_consume"]

    class AccountTransfer(Base):
        ts = Stamp()
        trans_number = pw.CharField(64, unique=True)
        src_account = pw.ForeignKeyField(Account, column_name="src_account_id", backref="+")
        dst_account = pw.ForeignKeyField(Account, column_name="dst_account_id", backref="+")
        amount = money()

        class Meta:
            table_name = names["account_transfer"]

    return SimpleNamespace(Product=Product, Order=Order, Payment=Payment, Account=Account,
                           AccountReceipt=AccountReceipt, AccountConsume=AccountConsume,
                           AccountTransfer=AccountTransfer)


class ParkingApi:
    """The ten functions, each inside the request's `atomic()` block."""

    def __init__(self, models: SimpleNamespace, peewee_db: pw.Database):
        self.m = models
        self.locks = bool(peewee_db.for_update)

    def locked(self, query: pw.ModelSelect) -> pw.ModelSelect:
        """SELECT ... FOR UPDATE where the database has it."""
        return query.for_update() if self.locks else query

    # --- helpers -------------------------------------------------------------------
    def _account_for_update(self, user_eid: str) -> Any:
        Account = self.m.Account
        account = self.locked(Account.select().where(Account.user_eid == user_eid)).first()
        if account is None:
            account = Account.create(user_eid=user_eid, balance=ZERO, reserved=ZERO)
        return account

    def _payment_for_update(self, call: Call) -> Any:
        Payment = self.m.Payment
        trans = call.param("transaction_id")
        return self.locked(Payment.select().where(Payment.trans_number == trans)).first() \
            if trans else None

    def _order_for_update(self, order_id: int) -> Any:
        Order = self.m.Order
        return self.locked(Order.select().where(Order.id == order_id)).get()

    def _ticket_order(self, product: Any, ticket: str, *, lock: bool) -> Any:
        Order = self.m.Order
        query = Order.select().where((Order.product == product)
                                     & (Order.ticket_number == ticket))
        order = (self.locked(query) if lock else query).first()
        if order is None:
            raise refusal("user_ticket_not_found")
        if order.finish_ts is not None:
            raise refusal("user_ticket_out_of_parking")
        return order

    def _add_places(self, product_id: int, delta: int) -> None:
        Product = self.m.Product
        (Product.update(places_avail=Product.places_avail + delta)
         .where(Product.id == product_id).execute())

    def _settle_consume(self, payment: Any, *, spend: bool) -> None:
        """Balance reserved for the payment: spent when it is paid, released when it is
        cancelled."""
        Consume, Account = self.m.AccountConsume, self.m.Account
        consume = self.locked(Consume.select().where((Consume.payment == payment)
                                                     & (Consume.is_reserved == 1))).first()
        if consume is None:
            return
        account = self.locked(Account.select().where(Account.id == consume.account_id)).get()
        account.reserved -= consume.amount
        if spend:
            account.balance -= consume.amount
        else:
            consume.amount = ZERO
        account.save()
        consume.is_reserved = 0
        consume.save()

    @staticmethod
    def _session_minutes(call: Call) -> int:
        minutes = pricing.session_minutes(call.version, call.field("duration"))
        if minutes is None:
            raise refusal("invalid_duration")
        return minutes

    # --- the functions -----------------------------------------------------------------
    def get_service_info(self, call: Call) -> Answer:
        Product, Account = self.m.Product, self.m.Account
        user_id = call.param("user_id")
        if call.version >= 1 and not user_id:
            raise refusal("invalid_user_id")
        if call.version == 1 and not call.field("plate"):
            raise refusal("invalid_registration_plate")
        name = call.field("parking")
        product = Product.get_or_none(Product.name == name) if name else None
        if product is None:
            raise refusal("invalid_parking_id")
        ticket = call.field("ticket")
        order = self._ticket_order(product, ticket, lock=False) if ticket else None
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
            account = Account.get_or_none(Account.user_eid == user_id)
            info["balance"] = pricing.fmt_money(account.balance if account else ZERO)
        return success(price=pricing.fmt_money(pricing.cost(minutes, hourly)), info=info)

    def create_reservation(self, call: Call) -> Answer:
        m = self.m
        user_id = call.param("user_id")
        if call.version >= 1 and not user_id:
            raise refusal("invalid_user_id")
        ticket, plate = call.field("ticket"), call.field("plate")
        if not plate and (call.version >= 1 or not ticket):
            raise refusal("invalid_registration_plate")
        name = call.field("parking")
        product = self.locked(m.Product.select().where(m.Product.name == name)).first() \
            if name else None
        if product is None:
            raise refusal("invalid_parking_id")
        price, from_balance, trans = payment_terms(call)
        existing = m.Payment.get_or_none(m.Payment.trans_number == trans)
        if existing is not None:
            if ("no-idempotent-replay" not in call.broken and existing.amount == price
                    and existing.order.product_id == product.id):
                raise Reply("success")
            raise Reply("bad_transaction")
        if ticket:
            order = self._ticket_order(product, ticket, lock=True)
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
            order = m.Order.create(product=product, user_eid=user_id or None,
                                   plate_number=plate, start_ts=call.now,
                                   paid_until_ts=call.now, paid_amount=ZERO)
        payment = m.Payment.create(order=order, trans_number=trans, ts=call.now,
                                   hours=pricing.hours_of(minutes), amount=price)
        if from_balance > 0:
            if not user_id:
                raise refusal("invalid_user_id")
            account = self._account_for_update(user_id)
            if account.balance - account.reserved < from_balance:
                raise Reply("not_available")
            m.AccountConsume.create(account=account, payment=payment, ts=call.now,
                                    amount=from_balance, is_reserved=1)
            account.reserved += from_balance
            account.save()
        answer = success()
        if call.version >= 1:
            info: dict[str, Any] = {"start_ts": f"{unix_seconds(order.start_ts)}.000",
                                    "duration": minutes}
            if ticket:
                info["paid_duration"] = 0
            answer.update(price=pricing.fmt_money(total), info=info)
        return answer

    def pay_reservation(self, call: Call) -> Answer:
        payment = self._payment_for_update(call)
        if payment is None:
            raise Reply("bad_transaction")
        check_payable(call, paid=payment.payment_ts is not None,
                      cancelled=payment.cancel_ts is not None)
        payment.payment_ts = call.now
        payment.save()
        order = self._order_for_update(payment.order_id)
        order.paid_amount += payment.amount
        order.paid_until_ts += pricing.hours_delta(payment.hours)
        order.save()
        if order.plate_session and order.finish_ts is None and order.paid_until_ts > call.now:
            self._add_places(order.product_id, -1)
        self._settle_consume(payment, spend=True)
        return success()

    def cancel_reservation(self, call: Call) -> Answer:
        payment = self._payment_for_update(call)
        if payment is None:
            raise Reply("bad_transaction")
        if payment.cancel_ts is not None:
            raise Reply("success")
        payment.cancel_ts = call.now
        payment.save()
        order = self._order_for_update(payment.order_id)
        if payment.payment_ts is not None:
            order.paid_amount -= payment.amount
            order.paid_until_ts -= pricing.hours_delta(payment.hours)
            if (order.plate_session and order.finish_ts is None
                    and order.paid_until_ts <= call.now):
                order.finish_ts = call.now
                self._add_places(order.product_id, +1)
            order.save()
        elif order.ticket_number is None and order.finish_ts is None:
            order.finish_ts = call.now  # a ticket's car is still inside: not finished
            order.save()
        self._settle_consume(payment, spend=False)
        return success()

    def stop_service(self, call: Call) -> Answer:
        m = self.m
        payment = self._payment_for_update(call)
        if payment is None or payment.payment_ts is None or payment.cancel_ts is not None:
            raise Reply("bad_transaction")
        order = self._order_for_update(payment.order_id)
        if order.ticket_number is not None:
            raise Reply("bad_transaction")
        receipt = m.AccountReceipt.get_or_none(m.AccountReceipt.order == order)
        if receipt is not None:
            raise Reply("success", delta_amount=pricing.fmt_money(receipt.amount))
        if order.paid_until_ts <= call.now:
            raise Reply("success", delta_amount="0.00")
        if not order.user_eid:
            raise Reply("bad_transaction")  # no account to credit (a v0 session without user)
        delta = pricing.refund(order.paid_amount, order.start_ts, order.paid_until_ts,
                               call.now)
        account = self._account_for_update(order.user_eid)
        m.AccountReceipt.create(account=account, order=order, ts=call.now, amount=delta)
        account.balance += delta
        account.save()
        order.paid_amount -= delta
        order.paid_until_ts = call.now
        order.save()
        return success(delta_amount=pricing.fmt_money(delta))

    def get_user_account(self, call: Call) -> Answer:
        Account = self.m.Account
        user_id = call.param("user_id")
        if not user_id:
            raise Reply("bad_transaction")
        account = Account.get_or_none(Account.user_eid == user_id)
        return success(balance=pricing.fmt_money(account.balance if account else ZERO))

    def account_transfer(self, call: Call) -> Answer:
        Transfer = self.m.AccountTransfer
        trans, src_eid, dst_eid = (call.param(n) for n in
                                   ("transaction_id", "src_user_id", "dst_user_id"))
        if not (trans and src_eid and dst_eid):
            raise Reply("bad_transaction")
        # locked in user id order, so that two opposite transfers cannot deadlock
        accounts = {eid: self._account_for_update(eid) for eid in sorted({src_eid, dst_eid})}
        src, dst = accounts[src_eid], accounts[dst_eid]
        if src.id == dst.id:
            raise Reply("bad_transaction", "same_src_and_dst")
        done = Transfer.get_or_none(Transfer.trans_number == trans)
        if done is not None:
            if done.src_account_id == src.id and done.dst_account_id == dst.id:
                raise Reply("success", "already_done")
            raise Reply("bad_transaction", "another_trans_exists")
        if src.balance <= 0:
            raise Reply("success", "nothing_to_transfer")
        if src.reserved != 0:
            raise Reply("not_available", "reserved_funds_present")
        amount = src.balance
        src.balance = ZERO
        src.save()
        dst.balance += amount
        dst.save()
        Transfer.create(src_account=src, dst_account=dst, trans_number=trans, ts=call.now,
                        amount=amount)
        return success()

    def issue_ticket(self, call: Call) -> Answer:
        Product, Order = self.m.Product, self.m.Order
        name = call.param("parking_id")
        product = self.locked(Product.select().where(Product.name == name)).first() \
            if name else None
        if product is None or product.places_avail <= 0:
            raise Reply("not_available")
        while True:
            ticket = str(_random.randint(*TICKETS))
            if not Order.select().where((Order.product == product)
                                        & (Order.ticket_number == ticket)).exists():
                break
        Order.create(product=product, ticket_number=ticket, start_ts=call.now,
                     paid_until_ts=call.now, paid_amount=ZERO, price=product.price)
        product.places_avail -= 1
        product.save()
        return success(user_ticket=ticket, available_places=product.places_avail)

    def leave_parking(self, call: Call) -> Answer:
        Product, Order = self.m.Product, self.m.Order
        name, ticket = call.param("parking_id"), call.param("user_ticket")
        product = Product.get_or_none(Product.name == name) if name and ticket else None
        if product is None:
            raise Reply("not_available")
        orders = list(self.locked(Order.select().where(
            (Order.product == product) & (Order.ticket_number == ticket)
            & Order.finish_ts.is_null())))
        if len(orders) != 1:
            raise Reply("not_available")
        order = orders[0]
        if (pricing.never_paid(order.start_ts, order.paid_until_ts)
                or call.now >= order.paid_until_ts + pricing.GRACE):
            raise Reply("not_enough_paid")
        order.finish_ts = call.now
        order.save()
        self._add_places(product.id, +1)
        return success()

    def check_plate_number(self, call: Call) -> Answer:
        Order = self.m.Order
        plate = call.param("registration_plate")
        if not plate:
            raise Reply("not_available")
        paid = Order.select().where((Order.plate_number == plate)
                                    & (Order.paid_until_ts > call.now)
                                    & Order.finish_ts.is_null()).count()
        return success(paid="true" if paid >= 1 else "false")


def database(target: TargetURL) -> pw.Database:
    """The Peewee database of `target` (thread-local connections, opened lazily)."""
    if target.kind == "sqlite":
        return pw.SqliteDatabase(path_of(target), timeout=30,
                                 pragmas={"busy_timeout": 30000}, check_same_thread=False)
    if target.kind == "postgresql":
        from playhouse.psycopg3_ext import Psycopg3Database

        return Psycopg3Database(target.database or target.user, host=target.host,
                                port=endpoint(target).port, user=target.user,
                                password=target.password, connect_timeout=10)
    from dbstand.drivers.mysql_args import connect_args

    args = connect_args(target)
    return pw.MySQLDatabase(args.pop("database"), charset="utf8mb4", connect_timeout=10,
                            **args)


class PeeweeService:
    """One Peewee database (a connection per server thread); atomic() per request."""

    stack = "python-peewee"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        self.db = database(target)
        self.sqlite = target.kind == "sqlite"
        self.api = ParkingApi(build_models(self.db, prefix), self.db)

    def call(self, name: str, call: Call) -> Answer:
        atomic = self.db.atomic("IMMEDIATE") if self.sqlite else self.db.atomic()
        with atomic:
            answer: Answer = getattr(self.api, name)(call)
            return answer

    def close(self) -> None:
        self.db.close()
