"""The parking rules (spec "Functions"), written once against repo.Repo.

Checks run in the spec's order. A `Reply` leaves early and rolls the transaction
back; a returned answer commits. Where the spec is silent, the choice made is
noted at the function (see also the module docstring of app.py).

Refusals are spelled as the spec's "How refusals are spelled" says: a validation
reason (invalid_user_id, user_ticket_not_found, ...) is `refusal(reason)`, i.e.
status `not_available` with the reason in status_code; every other refusal is a
status standing alone, except account_transfer's named status_codes.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

from dbstand.workloads.parking import pricing
from dbstand.workloads.parking.protocol import (
    Answer,
    Call,
    Reply,
    parse_decimal,
    parse_positive_int,
    refusal,
    success,
)
from dbstand.workloads.parking.repo import Repo
from dbstand.workloads.parking.values import unix_seconds

GRACE = dt.timedelta(minutes=15)
TICKETS = (1_000_000_000, 1_999_999_999)
_random = random.SystemRandom()


# --- helpers ---------------------------------------------------------------------
def _never_paid(order: Any) -> bool:
    """No paid time on the order (PAID_UNTIL still at START)."""
    return order.paid_until_ts <= order.start_ts


def _ticket_order(repo: Repo, product: Any, ticket: str, *, lock: bool) -> Any:
    order = repo.order_by_ticket(product.id, ticket, lock=lock)
    if order is None:
        raise refusal("user_ticket_not_found")
    if order.finish_ts is not None:
        raise refusal("user_ticket_out_of_parking")
    return order


def _ticket_minutes(order: Any, now: dt.datetime) -> int:
    overdue = pricing.overdue_minutes(order.paid_until_ts, now)
    return pricing.rounded_minutes(overdue, first_hour=_never_paid(order))


def _requested_minutes(call: Call) -> int:
    """Rounded minutes of a session without ticket (`duration` or v0 `hours`)."""
    text = call.field("duration")
    if call.version == 0:
        hours = parse_decimal(text)
        if hours is None or hours <= 0:
            raise refusal("invalid_duration")
        minutes = pricing.minutes_of_hours(hours)
    else:
        parsed = parse_positive_int(text)
        if parsed is None:
            raise refusal("invalid_duration")
        minutes = parsed
    return pricing.rounded_minutes(minutes, first_hour=True)


def _lock_or_create_account(repo: Repo, user_eid: str) -> Any:
    account = repo.account(user_eid, lock=True)
    if account is None:
        account = repo.add("account", user_eid=user_eid, balance=Decimal(0),
                           reserved=Decimal(0))
    return account


def _is_plate_order(order: Any) -> bool:
    return order.ticket_number is None and bool(order.plate_number)


def _give_place_back(repo: Repo, order: Any) -> None:
    product = repo.product_by_id(order.product_id, lock=True)
    product.places_avail += 1
    repo.save(product, "places_avail")


# --- functions ---------------------------------------------------------------------
def get_service_info(call: Call, repo: Repo) -> Answer:
    """Price and places for a session or a ticket; read-only."""
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    if call.version == 1 and not call.field("plate"):
        raise refusal("invalid_registration_plate")
    name = call.field("parking")
    product = repo.product(name, lock=False) if name else None
    if product is None:
        raise refusal("invalid_parking_id")
    ticket = call.field("ticket")
    order = None
    if ticket:
        order = _ticket_order(repo, product, ticket, lock=False)
        minutes, hourly, start = _ticket_minutes(order, call.now), order.price, order.start_ts
    else:
        minutes, hourly, start = _requested_minutes(call), product.price, call.now
    info: dict[str, Any] = {"available_places": product.places_avail}
    if call.version >= 1:
        info["start_ts"] = f"{unix_seconds(start)}.000"
        info["duration"] = minutes
        if order is not None:
            info["paid_duration"] = pricing.minutes_between(order.start_ts, order.paid_until_ts)
    if call.version >= 2:
        account = repo.account(user_id, lock=False)
        info["balance"] = pricing.fmt_money(account.balance if account else 0)
    return success(price=pricing.fmt_money(pricing.cost(minutes, hourly)), info=info)


def create_reservation(call: Call, repo: Repo) -> Answer:
    """A payment for a new plate session or for a ticket's overdue time."""
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    ticket, plate = call.field("ticket"), call.field("plate")
    if not plate and (call.version >= 1 or not ticket):
        raise refusal("invalid_registration_plate")
    name = call.field("parking")
    product = repo.product(name, lock=True) if name else None
    if product is None:
        raise refusal("invalid_parking_id")
    price = parse_decimal(call.param("price"))
    if price is None:
        raise Reply("not_available")
    from_balance = Decimal(0)
    if call.param("pay_from_balance"):
        parsed = parse_decimal(call.param("pay_from_balance"))
        if parsed is None:
            raise Reply("not_available")
        from_balance = parsed
    if from_balance < 0 or from_balance > price:
        raise Reply("wrong_price")
    trans = call.param("transaction_id")
    if not 4 <= len(trans) <= 64:
        raise Reply("bad_transaction")
    existing = repo.payment(trans, lock=True)
    if existing is not None:
        if "no-idempotent-replay" in call.broken:
            raise Reply("bad_transaction")
        paid_order = repo.order_by_id(existing.order_id, lock=False)
        if existing.amount == price and paid_order.product_id == product.id:
            raise Reply("success")
        raise Reply("bad_transaction")
    if ticket:
        order = _ticket_order(repo, product, ticket, lock=True)
        minutes, hourly = _ticket_minutes(order, call.now), order.price
    else:
        order, minutes, hourly = None, _requested_minutes(call), product.price
    total = pricing.cost(minutes, hourly)
    if total != price and "skip-price-check" not in call.broken:
        raise Reply("wrong_price")
    if order is None:
        # a ticket holder already has a place: only new sessions need one
        if product.places_avail <= 0:
            raise Reply("not_available")
        order = repo.add("order", product_id=product.id, user_eid=user_id or None,
                         ticket_number=None, plate_number=plate, start_ts=call.now,
                         paid_until_ts=call.now, finish_ts=None, paid_amount=Decimal(0),
                         price=None)
    payment = repo.add("payment", trans_number=trans, order_id=order.id, ts=call.now,
                       hours=pricing.hours_of(minutes), amount=price, payment_ts=None,
                       cancel_ts=None)
    if from_balance > 0:
        if not user_id:
            raise refusal("invalid_user_id")
        account = _lock_or_create_account(repo, user_id)
        if account.balance - account.reserved < from_balance:
            raise Reply("not_available")
        repo.add("account_consume", ts=call.now, account_id=account.id,
                 dst_payment_id=payment.id, amount=from_balance, is_reserved=1)
        account.reserved += from_balance
        repo.save(account, "reserved")
    answer = success()
    if call.version >= 1:
        info: dict[str, Any] = {"start_ts": f"{unix_seconds(order.start_ts)}.000",
                                "duration": minutes}
        if ticket:
            info["paid_duration"] = 0
        answer.update(price=pricing.fmt_money(total), info=info)
    return answer


def pay_reservation(call: Call, repo: Repo) -> Answer:
    """Confirm a payment: extend the order, take a place, spend reserved balance."""
    trans = call.param("transaction_id")
    payment = repo.payment(trans, lock=True) if trans else None
    if payment is None or payment.cancel_ts is not None:
        raise Reply("bad_transaction")
    if payment.payment_ts is not None:
        raise Reply("success")
    payment.payment_ts = call.now
    repo.save(payment, "payment_ts")
    order = repo.order_by_id(payment.order_id, lock=True)
    order.paid_amount += payment.amount
    order.paid_until_ts += pricing.hours_delta(payment.hours)
    repo.save(order, "paid_amount", "paid_until_ts")
    if _is_plate_order(order) and order.finish_ts is None and order.paid_until_ts > call.now:
        product = repo.product_by_id(order.product_id, lock=True)
        product.places_avail -= 1
        repo.save(product, "places_avail")
    consume = repo.consume_for(payment.id, lock=True)
    if consume is not None and consume.is_reserved:
        account = repo.account_by_id(consume.account_id, lock=True)
        account.reserved -= consume.amount
        account.balance -= consume.amount
        repo.save(account, "balance", "reserved")
        consume.is_reserved = 0
        repo.save(consume, "is_reserved")
    return success()


def cancel_reservation(call: Call, repo: Repo) -> Answer:
    """Cancel a payment, undoing what paying it did; release reserved balance."""
    trans = call.param("transaction_id")
    payment = repo.payment(trans, lock=True) if trans else None
    if payment is None:
        raise Reply("bad_transaction")
    if payment.cancel_ts is not None:
        raise Reply("success")
    payment.cancel_ts = call.now
    repo.save(payment, "cancel_ts")
    order = repo.order_by_id(payment.order_id, lock=True)
    if payment.payment_ts is not None:
        order.paid_amount -= payment.amount
        order.paid_until_ts -= pricing.hours_delta(payment.hours)
        repo.save(order, "paid_amount", "paid_until_ts")
        if (_is_plate_order(order) and order.finish_ts is None
                and order.paid_until_ts <= call.now):
            order.finish_ts = call.now
            repo.save(order, "finish_ts")
            _give_place_back(repo, order)
    elif order.ticket_number is None and order.finish_ts is None:
        # a ticket's car is still inside: only a session without ticket is finished
        order.finish_ts = call.now
        repo.save(order, "finish_ts")
    consume = repo.consume_for(payment.id, lock=True)
    if consume is not None and consume.is_reserved:
        account = repo.account_by_id(consume.account_id, lock=True)
        account.reserved -= consume.amount
        repo.save(account, "reserved")
        consume.amount = Decimal(0)
        consume.is_reserved = 0
        repo.save(consume, "amount", "is_reserved")
    return success()


def stop_service(call: Call, repo: Repo) -> Answer:
    """Refund unused prepaid quarter hours to the user's account."""
    trans = call.param("transaction_id")
    payment = repo.payment(trans, lock=True) if trans else None
    if payment is None or payment.payment_ts is None or payment.cancel_ts is not None:
        raise Reply("bad_transaction")
    order = repo.order_by_id(payment.order_id, lock=True)
    if order.ticket_number is not None:
        raise Reply("bad_transaction")
    receipt = repo.receipt_for(order.id)
    if receipt is not None:
        raise Reply("success", delta_amount=pricing.fmt_money(receipt.amount))
    if order.paid_until_ts <= call.now:
        raise Reply("success", delta_amount="0.00")
    if not order.user_eid:
        raise Reply("bad_transaction")  # no account to credit (a v0 session without user)
    delta = pricing.refund(order.paid_amount, order.start_ts, order.paid_until_ts, call.now)
    account = _lock_or_create_account(repo, order.user_eid)
    repo.add("account_receipt", ts=call.now, account_id=account.id, src_order_id=order.id,
             amount=delta)
    account.balance += delta
    repo.save(account, "balance")
    order.paid_amount -= delta
    order.paid_until_ts = call.now
    repo.save(order, "paid_amount", "paid_until_ts")
    return success(delta_amount=pricing.fmt_money(delta))


def get_user_account(call: Call, repo: Repo) -> Answer:
    """The balance; read-only, never creates an account."""
    user_id = call.param("user_id")
    if not user_id:
        raise Reply("bad_transaction")
    account = repo.account(user_id, lock=False)
    return success(balance=pricing.fmt_money(account.balance if account else 0))


def account_transfer(call: Call, repo: Repo) -> Answer:
    """Move a whole balance between accounts; every status_code path rolls back."""
    trans, src_id, dst_id = (call.param(n) for n in
                             ("transaction_id", "src_user_id", "dst_user_id"))
    if not (trans and src_id and dst_id):
        raise Reply("bad_transaction")
    # lock in user id order, so that two opposite transfers cannot deadlock
    locked = {eid: _lock_or_create_account(repo, eid) for eid in sorted({src_id, dst_id})}
    src, dst = locked[src_id], locked[dst_id]
    if src.id == dst.id:
        raise Reply("bad_transaction", "same_src_and_dst")
    done = repo.transfer(trans)
    if done is not None:
        if done.src_account_id == src.id and done.dst_account_id == dst.id:
            raise Reply("success", "already_done")
        raise Reply("bad_transaction", "another_trans_exists")
    if src.balance <= 0:
        raise Reply("success", "nothing_to_transfer")
    if src.reserved != 0:
        raise Reply("not_available", "reserved_funds_present")
    amount = src.balance
    dst.balance += amount
    src.balance = Decimal(0)
    repo.save(src, "balance")
    repo.save(dst, "balance")
    repo.add("account_transfer", ts=call.now, trans_number=trans, src_account_id=src.id,
             dst_account_id=dst.id, amount=amount)
    return success()


def issue_ticket(call: Call, repo: Repo) -> Answer:
    """A postpaid session: a random unused ticket number and a place."""
    name = call.param("parking_id")
    product = repo.product(name, lock=True) if name else None
    if product is None or product.places_avail <= 0:
        raise Reply("not_available")
    while True:
        ticket = str(_random.randint(*TICKETS))
        if not repo.ticket_taken(product.id, ticket):
            break
    repo.add("order", product_id=product.id, user_eid=None, ticket_number=ticket,
             plate_number=None, start_ts=call.now, paid_until_ts=call.now, finish_ts=None,
             paid_amount=Decimal(0), price=product.price)
    product.places_avail -= 1
    repo.save(product, "places_avail")
    return success(user_ticket=ticket, available_places=product.places_avail)


def leave_parking(call: Call, repo: Repo) -> Answer:
    """A ticket leaves if paid (15 minutes of grace); its place comes back."""
    name, ticket = call.param("parking_id"), call.param("user_ticket")
    product = repo.product(name, lock=True) if name and ticket else None
    if product is None:
        raise Reply("not_available")
    orders = repo.open_orders_by_ticket(product.id, ticket, lock=True)
    if len(orders) != 1:
        raise Reply("not_available")
    order = orders[0]
    if _never_paid(order) or call.now >= order.paid_until_ts + GRACE:
        raise Reply("not_enough_paid")
    order.finish_ts = call.now
    repo.save(order, "finish_ts")
    product.places_avail += 1
    repo.save(product, "places_avail")
    return success()


def check_plate_number(call: Call, repo: Repo) -> Answer:
    """Whether a plate has an unfinished session paid past now."""
    plate = call.param("registration_plate")
    if not plate:
        raise Reply("not_available")
    paid = repo.paid_plate_orders(plate, call.now) >= 1
    return success(paid="true" if paid else "false")
