"""Scenarios 3 and 4: refunds through stop_service and paying from the balance, then
account transfers through every status_code (park 1333, version 1)."""

from __future__ import annotations

from decimal import Decimal

from dbstand.workloads.parking.suite.checks import SEED_PRICES, cost, money, refund
from dbstand.workloads.parking.suite.context import BAD_TRANSACTION, NOT_AVAILABLE, SUCCESS, Ctx
from dbstand.workloads.parking.suite.descr import (
    ACCOUNT,
    CANCEL,
    CREATE,
    GSI,
    PARK_A,
    PAY,
    PLATE,
    STOP,
    TRANSFER,
    descr,
)

NA, BT = NOT_AVAILABLE, BAD_TRANSACTION
PER_HOUR = SEED_PRICES[PARK_A]
LONG, SHORT = 120, 60                       # minutes of the refunded and the spent session
LONG_PRICE = cost(LONG, PER_HOUR)           # 102.00
SHORT_PRICE = cost(SHORT, PER_HOUR)         # 51.00
#: stopped at once (well inside the first quarter hour): 105 of 120 minutes back, 89.25
REFUND = refund(LONG, LONG_PRICE, LONG * 60)


def _refunded_session(ctx: Ctx, user: str, label: str) -> None:
    """Reserve and pay 2 h, stop at once: REFUND credited to `user` (3 calls)."""
    tx = ctx.txid()
    ctx.call(f"{label}: reserve {LONG} min", CREATE,
             {"version": 1, "user_id": user, "price": money(LONG_PRICE), "transaction_id": tx,
              "service_descr": descr(1, PARK_A, ctx.plate(), LONG)}, SUCCESS)
    ctx.call(f"{label}: pay", PAY, {"transaction_id": tx}, SUCCESS)
    c = ctx.call(f"{label}: stop at once", STOP, {"transaction_id": tx}, SUCCESS)
    c.equal("delta_amount", money(REFUND))


def _balance(ctx: Ctx, label: str, user: str, expected: Decimal) -> None:
    c = ctx.call(label, ACCOUNT, {"user_id": user}, SUCCESS)
    c.equal("balance", money(expected))


def refunds(ctx: Ctx) -> None:
    """14 calls: empty account, quote, reserve, refund refused before payment, pay, stop,
    stop again (same delta), stop unknown, balance, plate no longer paid, v2 quote with
    the balance, reserve paid from the balance, pay it, balance after."""
    user, plate = ctx.user(), ctx.plate()
    base = {"version": 1, "user_id": user}
    _balance(ctx, "no account yet", user, Decimal(0))
    d = descr(1, PARK_A, plate, LONG)
    c = ctx.call(f"quote {LONG} min", GSI, {**base, "service_descr": d}, SUCCESS)
    c.equal("price", money(LONG_PRICE))
    tx = ctx.txid()
    ctx.call(f"reserve {LONG} min", CREATE,
             {**base, "service_descr": d, "price": money(LONG_PRICE), "transaction_id": tx},
             SUCCESS)
    ctx.call("refund before payment", STOP, {"transaction_id": tx}, BT)
    ctx.call("pay", PAY, {"transaction_id": tx}, SUCCESS)
    c = ctx.call("stop at once", STOP, {"transaction_id": tx}, SUCCESS)
    c.equal("delta_amount", money(REFUND))
    c = ctx.call("stop again: same delta, idempotent", STOP, {"transaction_id": tx}, SUCCESS)
    c.equal("delta_amount", money(REFUND))
    ctx.call("unknown transaction", STOP, {"transaction_id": ctx.txid()}, BT)
    _balance(ctx, "after the refund", user, REFUND)
    c = ctx.call("stopped plate", PLATE, {"registration_plate": plate}, SUCCESS)
    c.equal("paid", "false")
    c = ctx.call(f"v2 quote {SHORT} min", GSI,
                 {"version": 2, "user_id": user, "service_descr": descr(2, PARK_A, None, SHORT)},
                 SUCCESS)
    c.equal("price", money(SHORT_PRICE))
    c.equal("info.balance", money(REFUND))
    tx2 = ctx.txid()
    ctx.call("reserve, paid from the balance", CREATE,
             {**base, "service_descr": descr(1, PARK_A, ctx.plate(), SHORT),
              "price": money(SHORT_PRICE), "pay_from_balance": money(SHORT_PRICE),
              "transaction_id": tx2}, SUCCESS)
    ctx.call("pay from the balance", PAY, {"transaction_id": tx2}, SUCCESS)
    _balance(ctx, "after paying from it", user, REFUND - SHORT_PRICE)


def transfers(ctx: Ctx) -> None:
    """16 calls: quote, a refunded session, balance, then every transfer answer: same
    account, nothing to transfer, reserved funds present (a reservation from the
    balance, cancelled twice), done, already done, another transfer with that id;
    balances after."""
    a, b, c_ = ctx.user(), ctx.user(), ctx.user()
    c = ctx.call(f"quote {LONG} min", GSI,
                 {"version": 1, "user_id": a, "service_descr": descr(1, PARK_A, ctx.plate(), LONG)},
                 SUCCESS)
    c.equal("price", money(LONG_PRICE))
    _refunded_session(ctx, a, "source")
    _balance(ctx, "source after the refund", a, REFUND)

    def transfer(label: str, tx: str, src: str, dst: str, status: str,
                 code: str | None) -> None:
        ctx.call(label, TRANSFER, {"transaction_id": tx, "src_user_id": src,
                                   "dst_user_id": dst}, status, code)

    transfer("to itself", ctx.txid(), a, a, BT, "same_src_and_dst")
    transfer("from an empty account", ctx.txid(), c_, b, SUCCESS, "nothing_to_transfer")
    tx = ctx.txid()
    ctx.call("reserve, paid from the balance", CREATE,
             {"version": 1, "user_id": a, "service_descr": descr(1, PARK_A, ctx.plate(), SHORT),
              "price": money(SHORT_PRICE), "pay_from_balance": money(SHORT_PRICE),
              "transaction_id": tx}, SUCCESS)
    transfer("with funds reserved", ctx.txid(), a, b, NA, "reserved_funds_present")
    ctx.call("cancel the reservation", CANCEL, {"transaction_id": tx}, SUCCESS)
    ctx.call("cancel again", CANCEL, {"transaction_id": tx}, SUCCESS)
    done = ctx.txid()
    transfer("the whole balance", done, a, b, SUCCESS, None)
    transfer("replay", done, a, b, SUCCESS, "already_done")
    transfer("same id, other parties", done, a, c_, BT, "another_trans_exists")
    _balance(ctx, "source after the transfer", a, Decimal(0))
    _balance(ctx, "destination after the transfer", b, REFUND)
