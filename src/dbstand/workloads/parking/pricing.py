"""Pricing and refunds, exactly as the spec's Pricing section and stop_service say."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

QUARTER_MINUTES = 15
CENT = Decimal("0.01")
MICRO = Decimal("0.000001")


def rounded_minutes(minutes: int, first_hour: bool) -> int:
    """Whole minutes rounded up to a quarter hour; 0 counts as 1 in a first hour."""
    if minutes == 0 and first_hour:
        minutes = 1
    return -(-minutes // QUARTER_MINUTES) * QUARTER_MINUTES


def minutes_of_hours(hours: Decimal) -> int:
    """floor(hours * 60), the spec's whole minutes of a version-0 `hours`."""
    return int((hours * 60).to_integral_value(rounding=ROUND_FLOOR))


def overdue_minutes(paid_until: dt.datetime, now: dt.datetime) -> int:
    """Whole minutes past PAID_UNTIL_TS (0 if not passed)."""
    return max(0, int((now - paid_until).total_seconds()) // 60)


def minutes_between(start: dt.datetime, end: dt.datetime) -> int:
    return int((end - start).total_seconds()) // 60


def cost(minutes: int, price_per_hour: Decimal) -> Decimal:
    """Cost of `minutes` at an hourly price, rounded to cents."""
    return money(Decimal(minutes) * Decimal(price_per_hour) / 60)


def hours_of(minutes: int) -> Decimal:
    """Minutes as the HOURS of a payment (exact for quarter hours)."""
    return (Decimal(minutes) / 60).quantize(MICRO)


def hours_delta(hours: Decimal) -> dt.timedelta:
    return dt.timedelta(seconds=int((Decimal(hours) * 3600).to_integral_value()))


def money(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def fmt_money(value: Decimal | int) -> str:
    """Money in answers: a 2-decimal string (never "-0.00")."""
    rounded = money(Decimal(value))
    return f"{rounded + 0:.2f}" if rounded else "0.00"


def refund(paid_amount: Decimal, start: dt.datetime, paid_until: dt.datetime,
           now: dt.datetime) -> Decimal:
    """stop_service's delta: unused whole quarter hours at the paid price per minute."""
    seconds_left = int((paid_until - now).total_seconds())
    minutes_left = ((seconds_left - 1) // 900) * QUARTER_MINUTES
    per_minute = Decimal(paid_amount) / minutes_between(start, paid_until)
    return money(per_minute * minutes_left)
