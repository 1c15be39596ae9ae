"""python-raw: the parking service in hand-written SQL over DB-API (sqlite3, psycopg 3
or pg8000, PyMySQL), as a developer writes it without an ORM.

Each request is BEGIN (BEGIN IMMEDIATE on SQLite, which serializes writers) ... COMMIT
or ROLLBACK on the thread's own connection. Each function reads only the columns it
needs, joins a payment to its order in one locking read, counts places with
`places_avail = places_avail -/+ 1` in SQL, and writes every changed column of a row
in one UPDATE; money is computed in Python (exact Decimal: SQLite stores it as text).
Locking reads are SELECT ... FOR UPDATE except on SQLite. With logging on, every
statement and its parameters go to the `dbstand.workloads.parking.sql` logger.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import random
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db, pricing, schema
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
from dbstand.workloads.parking.values import (
    money_text,
    to_money,
    to_ts,
    ts_text,
    unix_seconds,
)

sql_log = logging.getLogger("dbstand.workloads.parking.sql")
_random = random.SystemRandom()
ZERO = Decimal(0)


class Tx:
    """One transaction's statements: `{product}`... become table names and `{lock}`
    FOR UPDATE (nothing on SQLite), `?` the driver's placeholder; Decimal and
    datetime parameters become SQLite's text forms there."""

    def __init__(self, cur: Any, kind: str, texts: dict[str, str], names: dict[str, str],
                 log: bool):
        self.cur = cur
        self.kind = kind
        self.texts = texts
        self.names = names
        self.log = log

    def _sql(self, text: str) -> str:
        sql = self.texts.get(text)
        if sql is None:
            sql = self.texts[text] = to_paramstyle(text.format(**self.names),
                                                   db.paramstyle(self.kind))
        return sql

    def _params(self, params: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.kind != "sqlite":
            return params
        return tuple(money_text(p) if isinstance(p, Decimal) else
                     ts_text(p) if isinstance(p, dt.datetime) else p for p in params)

    def run(self, text: str, *params: Any) -> None:
        sql, values = self._sql(text), self._params(params)
        if self.log:
            sql_log.info("%s %r", sql, values)
        self.cur.execute(sql, values)

    def one(self, text: str, *params: Any) -> Any:
        self.run(text, *params)
        return self.cur.fetchone()

    def all(self, text: str, *params: Any) -> list[Any]:
        self.run(text, *params)
        return list(self.cur.fetchall())

    def insert(self, text: str, *params: Any) -> int:
        """An INSERT; the new row's id (RETURNING on PostgreSQL, lastrowid elsewhere)."""
        if self.kind == "postgresql":
            return int(self.one(text + " RETURNING id", *params)[0])
        self.run(text, *params)
        return int(self.cur.lastrowid)


# --- shared steps ----------------------------------------------------------------
def _account_for_update(tx: Tx, user_eid: str) -> tuple[int, Decimal, Decimal]:
    """(id, balance, reserved) of the user's account, locked; created when missing."""
    row = tx.one("SELECT id, balance, reserved FROM {account} WHERE user_eid = ?{lock}",
                 user_eid)
    if row is None:
        new = tx.insert("INSERT INTO {account} (user_eid, balance, reserved) "
                        "VALUES (?, ?, ?)", user_eid, ZERO, ZERO)
        return new, ZERO, ZERO
    return row[0], to_money(row[1]), to_money(row[2])


#: a payment joined to its order, both locked
_PAYMENT = ("SELECT p.id, p.hours, p.amount, p.payment_ts, p.cancel_ts, o.id, o.product_id, "
            "o.user_eid, o.ticket_number, o.plate_number, o.start_ts, o.paid_until_ts, "
            "o.finish_ts, o.paid_amount FROM {payment} p JOIN {order} o ON o.id = p.order_id "
            "WHERE p.trans_number = ?{lock}")


def _release_consume(tx: Tx, payment_id: int, spend: bool) -> None:
    """A reserved consume row of the payment: spent (pay) or released (cancel)."""
    row = tx.one("SELECT c.id, c.amount, a.id, a.balance, a.reserved FROM {account_consume} c "
                 "JOIN {account} a ON a.id = c.account_id "
                 "WHERE c.dst_payment_id = ? AND c.is_reserved = 1{lock}", payment_id)
    if row is None:
        return
    consume_id, amount, account_id = row[0], to_money(row[1]), row[2]
    reserved = to_money(row[4]) - amount
    if spend:
        tx.run("UPDATE {account} SET balance = ?, reserved = ? WHERE id = ?",
               to_money(row[3]) - amount, reserved, account_id)
        tx.run("UPDATE {account_consume} SET is_reserved = 0 WHERE id = ?", consume_id)
    else:
        tx.run("UPDATE {account} SET reserved = ? WHERE id = ?", reserved, account_id)
        tx.run("UPDATE {account_consume} SET amount = ?, is_reserved = 0 WHERE id = ?",
               ZERO, consume_id)


def _session_minutes(call: Call) -> int:
    minutes = pricing.session_minutes(call.version, call.field("duration"))
    if minutes is None:
        raise refusal("invalid_duration")
    return minutes


# --- the functions -----------------------------------------------------------------
def get_service_info(tx: Tx, call: Call) -> Answer:
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    if call.version == 1 and not call.field("plate"):
        raise refusal("invalid_registration_plate")
    name = call.field("parking")
    product = tx.one("SELECT id, places_avail, price FROM {product} WHERE name = ?",
                     name) if name else None
    if product is None:
        raise refusal("invalid_parking_id")
    product_id, places, price = product
    ticket = call.field("ticket")
    paid_minutes = None
    if ticket:
        order = tx.one("SELECT start_ts, paid_until_ts, finish_ts, price FROM {order} "
                       "WHERE product_id = ? AND ticket_number = ?", product_id, ticket)
        if order is None:
            raise refusal("user_ticket_not_found")
        if order[2] is not None:
            raise refusal("user_ticket_out_of_parking")
        start, paid_until, hourly = to_ts(order[0]), to_ts(order[1]), to_money(order[3])
        minutes = pricing.ticket_minutes(start, paid_until, call.now)
        paid_minutes = pricing.minutes_between(start, paid_until)
    else:
        start, minutes, hourly = call.now, _session_minutes(call), to_money(price)
    info: dict[str, Any] = {"available_places": places}
    if call.version >= 1:
        info["start_ts"] = f"{unix_seconds(start)}.000"
        info["duration"] = minutes
        if paid_minutes is not None:
            info["paid_duration"] = paid_minutes
    if call.version >= 2:
        account = tx.one("SELECT balance FROM {account} WHERE user_eid = ?", user_id)
        info["balance"] = pricing.fmt_money(to_money(account[0]) if account else ZERO)
    return success(price=pricing.fmt_money(pricing.cost(minutes, hourly)), info=info)


def create_reservation(tx: Tx, call: Call) -> Answer:
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    ticket, plate = call.field("ticket"), call.field("plate")
    if not plate and (call.version >= 1 or not ticket):
        raise refusal("invalid_registration_plate")
    name = call.field("parking")
    product = tx.one("SELECT id, places_avail, price FROM {product} WHERE name = ?{lock}",
                     name) if name else None
    if product is None:
        raise refusal("invalid_parking_id")
    product_id, places, product_price = product
    price, from_balance, trans = payment_terms(call)
    replay = tx.one("SELECT p.amount, o.product_id FROM {payment} p "
                    "JOIN {order} o ON o.id = p.order_id WHERE p.trans_number = ?", trans)
    if replay is not None:
        if ("no-idempotent-replay" not in call.broken and to_money(replay[0]) == price
                and replay[1] == product_id):
            raise Reply("success")
        raise Reply("bad_transaction")
    if ticket:
        order = tx.one("SELECT id, start_ts, paid_until_ts, finish_ts, price FROM {order} "
                       "WHERE product_id = ? AND ticket_number = ?{lock}", product_id, ticket)
        if order is None:
            raise refusal("user_ticket_not_found")
        if order[3] is not None:
            raise refusal("user_ticket_out_of_parking")
        order_id, start, hourly = order[0], to_ts(order[1]), to_money(order[4])
        minutes = pricing.ticket_minutes(start, to_ts(order[2]), call.now)
    else:
        order_id, start = None, call.now
        minutes, hourly = _session_minutes(call), to_money(product_price)
    total = pricing.cost(minutes, hourly)
    if total != price and "skip-price-check" not in call.broken:
        raise Reply("wrong_price")
    if order_id is None:
        if places <= 0:  # a ticket holder is inside already: only new sessions need one
            raise Reply("not_available")
        order_id = tx.insert("INSERT INTO {order} (product_id, user_eid, plate_number, "
                             "start_ts, paid_until_ts, paid_amount) VALUES (?, ?, ?, ?, ?, ?)",
                             product_id, user_id or None, plate, start, start, ZERO)
    payment_id = tx.insert("INSERT INTO {payment} (trans_number, order_id, ts, hours, amount) "
                           "VALUES (?, ?, ?, ?, ?)", trans, order_id, call.now,
                           pricing.hours_of(minutes), price)
    if from_balance > 0:
        if not user_id:
            raise refusal("invalid_user_id")
        account_id, balance, reserved = _account_for_update(tx, user_id)
        if balance - reserved < from_balance:
            raise Reply("not_available")
        tx.run("INSERT INTO {account_consume} (ts, account_id, dst_payment_id, amount, "
               "is_reserved) VALUES (?, ?, ?, ?, 1)", call.now, account_id, payment_id,
               from_balance)
        tx.run("UPDATE {account} SET reserved = ? WHERE id = ?", reserved + from_balance,
               account_id)
    answer = success()
    if call.version >= 1:
        info: dict[str, Any] = {"start_ts": f"{unix_seconds(start)}.000", "duration": minutes}
        if ticket:
            info["paid_duration"] = 0
        answer.update(price=pricing.fmt_money(total), info=info)
    return answer


def pay_reservation(tx: Tx, call: Call) -> Answer:
    trans = call.param("transaction_id")
    row = tx.one(_PAYMENT, trans) if trans else None
    if row is None:
        raise Reply("bad_transaction")
    check_payable(call, paid=row[3] is not None, cancelled=row[4] is not None)
    (payment_id, hours, amount, _, _, order_id, product_id, _, ticket, plate, _, paid_until,
     finish, paid_amount) = row
    paid_until = to_ts(paid_until) + pricing.hours_delta(to_money(hours))
    tx.run("UPDATE {payment} SET payment_ts = ? WHERE id = ?", call.now, payment_id)
    tx.run("UPDATE {order} SET paid_amount = ?, paid_until_ts = ? WHERE id = ?",
           to_money(paid_amount) + to_money(amount), paid_until, order_id)
    if ticket is None and plate and finish is None and paid_until > call.now:
        tx.run("UPDATE {product} SET places_avail = places_avail - 1 WHERE id = ?", product_id)
    _release_consume(tx, payment_id, spend=True)
    return success()


def cancel_reservation(tx: Tx, call: Call) -> Answer:
    trans = call.param("transaction_id")
    row = tx.one(_PAYMENT, trans) if trans else None
    if row is None:
        raise Reply("bad_transaction")
    if row[4] is not None:
        raise Reply("success")
    (payment_id, hours, amount, paid_ts, _, order_id, product_id, _, ticket, plate, _,
     paid_until, finish, paid_amount) = row
    tx.run("UPDATE {payment} SET cancel_ts = ? WHERE id = ?", call.now, payment_id)
    if paid_ts is not None:
        paid_until = to_ts(paid_until) - pricing.hours_delta(to_money(hours))
        left = to_money(paid_amount) - to_money(amount)
        if ticket is None and plate and finish is None and paid_until <= call.now:
            tx.run("UPDATE {order} SET paid_amount = ?, paid_until_ts = ?, finish_ts = ? "
                   "WHERE id = ?", left, paid_until, call.now, order_id)
            tx.run("UPDATE {product} SET places_avail = places_avail + 1 WHERE id = ?",
                   product_id)
        else:
            tx.run("UPDATE {order} SET paid_amount = ?, paid_until_ts = ? WHERE id = ?",
                   left, paid_until, order_id)
    elif ticket is None and finish is None:  # a ticket's car is still inside
        tx.run("UPDATE {order} SET finish_ts = ? WHERE id = ?", call.now, order_id)
    _release_consume(tx, payment_id, spend=False)
    return success()


def stop_service(tx: Tx, call: Call) -> Answer:
    trans = call.param("transaction_id")
    row = tx.one(_PAYMENT, trans) if trans else None
    if row is None or row[3] is None or row[4] is not None or row[8] is not None:
        raise Reply("bad_transaction")
    order_id, user_eid, start, paid_until, paid_amount = (row[5], row[7], to_ts(row[10]),
                                                          to_ts(row[11]), to_money(row[13]))
    receipt = tx.one("SELECT amount FROM {account_receipt} WHERE src_order_id = ?", order_id)
    if receipt is not None:
        raise Reply("success", delta_amount=pricing.fmt_money(to_money(receipt[0])))
    if paid_until <= call.now:
        raise Reply("success", delta_amount="0.00")
    if not user_eid:
        raise Reply("bad_transaction")  # no account to credit (a v0 session without user)
    delta = pricing.refund(paid_amount, start, paid_until, call.now)
    account_id, balance, _ = _account_for_update(tx, user_eid)
    tx.run("INSERT INTO {account_receipt} (ts, account_id, src_order_id, amount) "
           "VALUES (?, ?, ?, ?)", call.now, account_id, order_id, delta)
    tx.run("UPDATE {account} SET balance = ? WHERE id = ?", balance + delta, account_id)
    tx.run("UPDATE {order} SET paid_amount = ?, paid_until_ts = ? WHERE id = ?",
           paid_amount - delta, call.now, order_id)
    return success(delta_amount=pricing.fmt_money(delta))


def get_user_account(tx: Tx, call: Call) -> Answer:
    user_id = call.param("user_id")
    if not user_id:
        raise Reply("bad_transaction")
    row = tx.one("SELECT balance FROM {account} WHERE user_eid = ?", user_id)
    return success(balance=pricing.fmt_money(to_money(row[0]) if row else ZERO))


def account_transfer(tx: Tx, call: Call) -> Answer:
    trans, src_eid, dst_eid = (call.param(n) for n in
                               ("transaction_id", "src_user_id", "dst_user_id"))
    if not (trans and src_eid and dst_eid):
        raise Reply("bad_transaction")
    # both accounts locked by one read in user id order (no deadlock between opposite
    # transfers); the missing ones created
    rows = tx.all("SELECT user_eid, id, balance, reserved FROM {account} "
                  "WHERE user_eid IN (?, ?) ORDER BY user_eid{lock}", src_eid, dst_eid)
    accounts = {r[0]: (r[1], to_money(r[2]), to_money(r[3])) for r in rows}
    for eid in sorted({src_eid, dst_eid} - set(accounts)):
        accounts[eid] = (tx.insert("INSERT INTO {account} (user_eid, balance, reserved) "
                                   "VALUES (?, ?, ?)", eid, ZERO, ZERO), ZERO, ZERO)
    (src_id, balance, reserved), (dst_id, dst_balance, _) = accounts[src_eid], accounts[dst_eid]
    if src_id == dst_id:
        raise Reply("bad_transaction", "same_src_and_dst")
    done = tx.one("SELECT src_account_id, dst_account_id FROM {account_transfer} "
                  "WHERE trans_number = ?", trans)
    if done is not None:
        if tuple(done) == (src_id, dst_id):
            raise Reply("success", "already_done")
        raise Reply("bad_transaction", "another_trans_exists")
    if balance <= 0:
        raise Reply("success", "nothing_to_transfer")
    if reserved != 0:
        raise Reply("not_available", "reserved_funds_present")
    tx.run("UPDATE {account} SET balance = ? WHERE id = ?", ZERO, src_id)
    tx.run("UPDATE {account} SET balance = ? WHERE id = ?", dst_balance + balance, dst_id)
    tx.run("INSERT INTO {account_transfer} (ts, trans_number, src_account_id, dst_account_id, "
           "amount) VALUES (?, ?, ?, ?, ?)", call.now, trans, src_id, dst_id, balance)
    return success()


def issue_ticket(tx: Tx, call: Call) -> Answer:
    name = call.param("parking_id")
    product = tx.one("SELECT id, places_avail, price FROM {product} WHERE name = ?{lock}",
                     name) if name else None
    if product is None or product[1] <= 0:
        raise Reply("not_available")
    product_id, places, price = product
    while True:
        ticket = str(_random.randint(*TICKETS))
        if tx.one("SELECT 1 FROM {order} WHERE product_id = ? AND ticket_number = ?",
                  product_id, ticket) is None:
            break
    tx.run("INSERT INTO {order} (product_id, ticket_number, start_ts, paid_until_ts, "
           "paid_amount, price) VALUES (?, ?, ?, ?, ?, ?)", product_id, ticket, call.now,
           call.now, ZERO, to_money(price))
    tx.run("UPDATE {product} SET places_avail = places_avail - 1 WHERE id = ?", product_id)
    return success(user_ticket=ticket, available_places=places - 1)


def leave_parking(tx: Tx, call: Call) -> Answer:
    name, ticket = call.param("parking_id"), call.param("user_ticket")
    product = tx.one("SELECT id FROM {product} WHERE name = ?", name) if name and ticket \
        else None
    if product is None:
        raise Reply("not_available")
    orders = tx.all("SELECT id, start_ts, paid_until_ts FROM {order} WHERE product_id = ? "
                    "AND ticket_number = ? AND finish_ts IS NULL{lock}", product[0], ticket)
    if len(orders) != 1:
        raise Reply("not_available")
    order_id, start, paid_until = orders[0][0], to_ts(orders[0][1]), to_ts(orders[0][2])
    if pricing.never_paid(start, paid_until) or call.now >= paid_until + pricing.GRACE:
        raise Reply("not_enough_paid")
    tx.run("UPDATE {order} SET finish_ts = ? WHERE id = ?", call.now, order_id)
    tx.run("UPDATE {product} SET places_avail = places_avail + 1 WHERE id = ?", product[0])
    return success()


def check_plate_number(tx: Tx, call: Call) -> Answer:
    plate = call.param("registration_plate")
    if not plate:
        raise Reply("not_available")
    found = tx.one("SELECT 1 FROM {order} WHERE plate_number = ? AND paid_until_ts > ? "
                   "AND finish_ts IS NULL LIMIT 1", plate, call.now)
    return success(paid="true" if found else "false")


FUNCTIONS: dict[str, Callable[[Tx, Call], Answer]] = {f.__name__: f for f in (
    get_service_info, create_reservation, pay_reservation, cancel_reservation, stop_service,
    get_user_account, account_transfer, issue_ticket, leave_parking, check_plate_number)}


class RawService:
    """Per-thread connections; one explicit transaction per request."""

    stack = "python-raw"

    def __init__(self, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1):
        self.target = target
        self.kind = target.kind
        self.log_sql = log_sql
        self.begin = "BEGIN IMMEDIATE" if target.kind == "sqlite" else "BEGIN"
        self.names = {**schema.tables(prefix),
                      "lock": "" if target.kind == "sqlite" else " FOR UPDATE"}
        self.texts: dict[str, str] = {}
        self._local = threading.local()
        self._conns: list[Any] = []
        self._lock = threading.Lock()

    def _cursor(self) -> Any:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            conn = db.connect(self.target)
            with self._lock:
                self._conns.append(conn)
            self._local.conn, cur = conn, conn.cursor()
            self._local.cur = cur
        return cur

    def _forget(self) -> None:
        """Drop a connection that failed: the next request opens a fresh one."""
        conn = getattr(self._local, "conn", None)
        self._local.cur = self._local.conn = None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _plain(self, cur: Any, sql: str) -> None:
        if self.log_sql:
            sql_log.info("%s", sql)
        cur.execute(sql)

    def call(self, name: str, call: Call) -> Answer:
        cur = self._cursor()
        tx = Tx(cur, self.kind, self.texts, self.names, self.log_sql)
        try:
            self._plain(cur, self.begin)
            answer = FUNCTIONS[name](tx, call)
            self._plain(cur, "COMMIT")
            return answer
        except Reply:
            self._plain(cur, "ROLLBACK")
            raise
        except BaseException:
            try:
                self._plain(cur, "ROLLBACK")
            except Exception:
                self._forget()
            raise

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(Exception):
                    conn.close()
            self._conns.clear()
