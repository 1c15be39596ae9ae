"""Scenarios 1 and 2: a prepaid session with every validation error and idempotent
replays (park 1333), and a postpaid ticket session (park 15001)."""

from __future__ import annotations

from decimal import Decimal

from dbstand.workloads.parking.suite.checks import SEED_PRICES, cost, money
from dbstand.workloads.parking.suite.context import BAD_TRANSACTION, NOT_AVAILABLE, SUCCESS, Ctx
from dbstand.workloads.parking.suite.descr import (
    CANCEL,
    CREATE,
    GSI,
    ISSUE,
    LEAVE,
    PARK_A,
    PARK_B,
    PAY,
    PLATE,
    STOP,
    descr,
)

NA, BT = NOT_AVAILABLE, BAD_TRANSACTION


def prepaid(ctx: Ctx) -> None:
    """17 calls: quote, six refusals, reserve with a wrong price and a short id,
    reserve, replay, a conflicting replay, pay twice, places, plate, cancel unknown."""
    user, plate = ctx.user(), ctx.plate()
    price = money(cost(120, SEED_PRICES[PARK_A]))           # "102.00"
    d = descr(1, PARK_A, plate, 120)
    base = {"version": 1, "user_id": user}
    c = ctx.call("quote 120 min", GSI, {**base, "service_descr": d}, SUCCESS)
    c.equal("price", price)
    c.equal("info.duration", 120)
    c.start_ts()
    c.absent("info.balance")
    before = ctx.places(c, "info.available_places", None)
    ctx.call("no user_id", GSI, {"version": 1, "service_descr": d}, NA, "invalid_user_id")
    ctx.call("no plate", GSI, {**base, "service_descr": descr(1, PARK_A, None, 120)}, NA,
             "invalid_registration_plate")
    ctx.call("unknown parking", GSI,
             {**base, "service_descr": descr(1, "no-such-park", plate, 120)}, NA,
             "invalid_parking_id")
    ctx.call("duration not a number", GSI,
             {**base, "service_descr": descr(1, PARK_A, plate, "abc")}, NA,
             "invalid_duration")
    ctx.call("duration 0", GSI, {**base, "service_descr": descr(1, PARK_A, plate, 0)}, NA,
             "invalid_duration")
    tx = ctx.txid()
    reserve = {**base, "service_descr": d, "transaction_id": tx}
    ctx.call("price too low", CREATE, {**reserve, "price": money(Decimal(price) - 1)},
             "wrong_price")
    ctx.call("transaction id of 3 chars", CREATE,
             {**reserve, "transaction_id": tx[:3], "price": price}, BT)
    c = ctx.call("reserve 120 min", CREATE, {**reserve, "price": price}, SUCCESS)
    c.equal("price", price)
    c.equal("info.duration", 120)
    c.start_ts()
    ctx.call("idempotent replay", CREATE, {**reserve, "price": price}, SUCCESS)
    ctx.call("same transaction id, other amount", CREATE,
             {**reserve, "service_descr": descr(1, PARK_A, plate, 60),
              "price": money(cost(60, SEED_PRICES[PARK_A]))}, BT)
    ctx.call("pay", PAY, {"transaction_id": tx}, SUCCESS)
    ctx.call("pay again: no change", PAY, {"transaction_id": tx}, SUCCESS)
    ctx.call("unknown transaction", PAY, {"transaction_id": ctx.txid()}, BT)
    c = ctx.call("places after paying", GSI, {**base, "service_descr": d}, SUCCESS)
    ctx.places(c, "info.available_places", before - 1)
    c = ctx.call("paid plate", PLATE, {"registration_plate": plate}, SUCCESS)
    c.equal("paid", "true")
    ctx.call("unknown transaction", CANCEL, {"transaction_id": ctx.txid()}, BT)


def postpaid(ctx: Ctx) -> None:
    """11 calls (version 0): ticket, quotes, wrong tickets, reserve the first hour, pay
    twice, quote when paid, no refund of a ticket, leave, out of the parking."""
    c = ctx.call("issue", ISSUE, {"parking_id": PARK_B}, SUCCESS)
    ticket = c.get("user_ticket")
    if not isinstance(ticket, str) or not ticket.isdigit() or \
            not 1_000_000_000 <= int(ticket) <= 1_999_999_999:
        c.fail("user_ticket a string of 1000000000..1999999999", f"user_ticket={ticket!r}")
    places = ctx.places(c, "available_places", None)
    d = descr(0, PARK_B, ticket=ticket)
    first = money(cost(0, SEED_PRICES[PARK_B], first_hour=True))    # "15.00"
    c = ctx.call("quote a fresh ticket", GSI, {"service_descr": d}, SUCCESS)
    c.equal("price", first)
    ctx.places(c, "info.available_places", places)
    ctx.call("unknown ticket", GSI, {"service_descr": descr(0, PARK_B, ticket="999")}, NA,
             "user_ticket_not_found")
    ctx.call("ticket of another parking", GSI,
             {"version": 1, "user_id": ctx.user(),
              "service_descr": descr(1, PARK_A, ctx.plate(), ticket=ticket)},
             NA, "user_ticket_not_found")
    tx = ctx.txid()
    ctx.call("reserve the first hour", CREATE,
             {"service_descr": d, "price": first, "transaction_id": tx}, SUCCESS)
    ctx.call("pay", PAY, {"transaction_id": tx}, SUCCESS)
    ctx.call("pay twice", PAY, {"transaction_id": tx}, SUCCESS)
    c = ctx.call("quote when paid", GSI, {"service_descr": d}, SUCCESS)
    c.equal("price", money(cost(0, SEED_PRICES[PARK_B], first_hour=False)))  # "0.00"
    ctx.call("refund of a ticket", STOP, {"transaction_id": tx}, BT)
    ctx.call("leave", LEAVE, {"parking_id": PARK_B, "user_ticket": ticket}, SUCCESS)
    ctx.call("after leaving", GSI, {"version": 1, "user_id": ctx.user(),
                                    "service_descr": descr(1, PARK_B, ctx.plate(),
                                                           ticket=ticket)},
             NA, "user_ticket_out_of_parking")
