"""The spec's checks and answers that need no database, in the spec's order, for every
Python implementation.

An implementation reads, locks and writes its own way (hand-written SQL, an ORM); what
it answers from what it found is the same rule in every one of them, so it is written
here once: each check raises the early `Reply` (its transaction rolls back) or returns
what the function goes on with.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NoReturn

from dbstand.workloads.parking import pricing
from dbstand.workloads.parking.protocol import Answer, Call, Reply, parse_decimal, refusal, success
from dbstand.workloads.parking.values import unix_seconds

ZERO = Decimal(0)


def service_info_user(call: Call) -> str:
    """get_service_info's checks before any read: the user id (v>=1) and the plate (v1);
    the user id ("" when absent)."""
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    if call.version == 1 and not call.field("plate"):
        raise refusal("invalid_registration_plate")
    return user_id


def reservation_request(call: Call) -> tuple[str, str, str]:
    """create_reservation's checks before any read: (user id, ticket, plate), a plate
    needed unless a v0 call names a ticket."""
    user_id = call.param("user_id")
    if call.version >= 1 and not user_id:
        raise refusal("invalid_user_id")
    ticket, plate = call.field("ticket"), call.field("plate")
    if not plate and (call.version >= 1 or not ticket):
        raise refusal("invalid_registration_plate")
    return user_id, ticket, plate


def session_minutes(call: Call) -> int:
    """The rounded minutes a session without ticket asks for, else invalid_duration."""
    minutes = pricing.session_minutes(call.version, call.field("duration"))
    if minutes is None:
        raise refusal("invalid_duration")
    return minutes


def payment_terms(call: Call) -> tuple[Decimal, Decimal, str]:
    """(price, part paid from the balance, transaction id) of a payment call, checked
    before any database work: the same refusals whichever way a service stores it."""
    price = parse_decimal(call.param("price"))
    if price is None:
        raise Reply("not_available")
    from_balance = ZERO
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
    return price, from_balance, trans


def check_replay(call: Call, same: Callable[[], bool]) -> NoReturn:
    """A payment with this transaction id exists: success (nothing written) when
    `same()` finds it the same payment (amount and park), else bad_transaction."""
    if "no-idempotent-replay" not in call.broken and same():
        raise Reply("success")
    raise Reply("bad_transaction")


def check_price(call: Call, total: Decimal, price: Decimal) -> None:
    """The price the client computed must be the service's."""
    if total != price and "skip-price-check" not in call.broken:
        raise Reply("wrong_price")


def check_payable(call: Call, paid: bool, cancelled: bool) -> None:
    """pay_reservation's checks on a found payment, in the spec's order: already paid
    (even if cancelled after): success, no change; else cancelled: bad_transaction.
    The study's own suite pays, cancels, then pays again and expects success (the
    `cancelled-before-paid` broken switch keeps the old, wrong order for tests)."""
    if cancelled and "cancelled-before-paid" in call.broken:
        raise Reply("bad_transaction")
    if paid:
        raise Reply("success")
    if cancelled:
        raise Reply("bad_transaction")


def service_info(call: Call, places: int, start: dt.datetime, minutes: int,
                 hourly: Decimal, paid_minutes: int | None,
                 balance: Callable[[], Decimal | None]) -> Answer:
    """get_service_info's answer: places, and by version the start, duration, paid
    duration (a ticket's) and balance (`balance()` reads it only for v2; None: no
    account yet)."""
    info: dict[str, Any] = {"available_places": places}
    if call.version >= 1:
        info["start_ts"] = f"{unix_seconds(start)}.000"
        info["duration"] = minutes
        if paid_minutes is not None:
            info["paid_duration"] = paid_minutes
    if call.version >= 2:
        info["balance"] = pricing.fmt_money(balance() or ZERO)
    return success(price=pricing.fmt_money(pricing.cost(minutes, hourly)), info=info)


def reservation_answer(call: Call, start: dt.datetime, minutes: int, total: Decimal,
                       ticket: str) -> Answer:
    """create_reservation's success: from v1 on with the price, start and duration (a
    ticket's paid duration is 0 until this payment is paid)."""
    answer = success()
    if call.version >= 1:
        info: dict[str, Any] = {"start_ts": f"{unix_seconds(start)}.000", "duration": minutes}
        if ticket:
            info["paid_duration"] = 0
        answer.update(price=pricing.fmt_money(total), info=info)
    return answer


def check_refundable(call: Call, receipt: Decimal | None, paid_until: dt.datetime,
                     user_eid: str | None) -> None:
    """stop_service's checks on a paid session: refunded already (the same delta again),
    nothing left to refund, or no account to credit (a v0 session without user)."""
    if receipt is not None:
        raise Reply("success", delta_amount=pricing.fmt_money(receipt))
    if paid_until <= call.now:
        raise Reply("success", delta_amount="0.00")
    if not user_eid:
        raise Reply("bad_transaction")


def transfer_request(call: Call) -> tuple[str, str, str]:
    """account_transfer's (transaction id, source user, destination user), all needed."""
    trans, src_eid, dst_eid = (call.param(n) for n in
                               ("transaction_id", "src_user_id", "dst_user_id"))
    if not (trans and src_eid and dst_eid):
        raise Reply("bad_transaction")
    return trans, src_eid, dst_eid


def check_transfer(same_accounts: bool, done: Callable[[], bool | None], balance: Decimal,
                   reserved: Decimal) -> None:
    """account_transfer's checks once both accounts are locked, in the spec's order:
    one account on both sides; this transaction id done already (`done()` reads it:
    whether it was this very transfer, None when not done); nothing to move; funds
    still reserved."""
    if same_accounts:
        raise Reply("bad_transaction", "same_src_and_dst")
    earlier = done()
    if earlier is not None:
        if earlier:
            raise Reply("success", "already_done")
        raise Reply("bad_transaction", "another_trans_exists")
    if balance <= 0:
        raise Reply("success", "nothing_to_transfer")
    if reserved != 0:
        raise Reply("not_available", "reserved_funds_present")


def check_leaving(call: Call, start: dt.datetime, paid_until: dt.datetime) -> None:
    """leave_parking: a ticket leaves when paid, up to the grace period past it."""
    if pricing.never_paid(start, paid_until) or call.now >= paid_until + pricing.GRACE:
        raise Reply("not_enough_paid")
