"""Scenario 5: the protocol versions 0, 1 and 2 side by side, and versions refused."""

from __future__ import annotations

from dbstand.workloads.parking.suite.checks import SEED_PRICES, cost, money
from dbstand.workloads.parking.suite.context import NOT_AVAILABLE, SUCCESS, Ctx
from dbstand.workloads.parking.suite.descr import (
    ACCOUNT,
    CANCEL,
    GSI,
    PARK_A,
    PARK_B,
    PLATE,
    descr,
)

NA = NOT_AVAILABLE


def versions(ctx: Ctx) -> None:
    """10 calls: v0 hours, v0 with v1 keys, v1 minutes, v2 without plate (balance 0.00),
    v2 without user, v2 with v0 keys, versions 3 / 7 / -1 refused, empty plate."""
    user, plate = ctx.user(), ctx.plate()
    c = ctx.call("v0, 2 hours, no user", GSI,
                 {"version": 0, "service_descr": descr(0, PARK_A, plate, hours=2)}, SUCCESS)
    c.equal("price", money(cost(120, SEED_PRICES[PARK_A])))
    c.integer("info.available_places")
    c.absent("info.start_ts")
    c.absent("info.balance")
    ctx.call("v0 with v1 keys", GSI,
             {"version": 0, "service_descr": descr(1, PARK_A, plate, 120)}, NA,
             "invalid_parking_id")
    c = ctx.call("v1, 45 min", GSI,
                 {"version": 1, "user_id": user, "service_descr": descr(1, PARK_A, plate, 45)},
                 SUCCESS)
    c.equal("price", money(cost(45, SEED_PRICES[PARK_A])))    # 38.25
    c.equal("info.duration", 45)
    c.start_ts()
    c.absent("info.balance")
    c = ctx.call("v2, 61 min, no plate", GSI,
                 {"version": 2, "user_id": user, "service_descr": descr(2, PARK_B, None, 61)},
                 SUCCESS)
    c.equal("price", money(cost(61, SEED_PRICES[PARK_B])))    # 75 min: 75.00
    c.equal("info.duration", 75)
    c.start_ts()
    c.equal("info.balance", "0.00")
    ctx.call("v2 without user", GSI,
             {"version": 2, "service_descr": descr(2, PARK_B, None, 61)}, NA, "invalid_user_id")
    ctx.call("v2 with v0 keys", GSI,
             {"version": 2, "user_id": user, "service_descr": descr(0, PARK_A, plate, hours=2)},
             NA, "invalid_parking_id")
    ctx.call("version 3", GSI,
             {"version": 3, "user_id": user, "service_descr": descr(1, PARK_A, plate, 45)},
             "bad_protocol")
    ctx.call("version 7", ACCOUNT, {"version": 7, "user_id": user}, "bad_protocol")
    ctx.call("version -1", CANCEL, {"version": -1, "transaction_id": ctx.txid()},
             "bad_protocol")
    ctx.call("empty plate", PLATE, {"registration_plate": ""}, NA)
