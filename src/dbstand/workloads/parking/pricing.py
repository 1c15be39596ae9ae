"""Pricing and refunds, exactly as the spec's Pricing section and stop_service say.

Pure functions (no database): the one part of the rules every Python implementation
shares, besides the spec and the conformance suite. Each implementation's own code
decides what to read, lock and write.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation

QUARTER_MINUTES = 15
#: leave_parking's grace after PAID_UNTIL_TS
GRACE = dt.timedelta(minutes=15)
CENT = Decimal("0.01")
MICRO = Decimal("0.000001")


def rounded_minutes(minutes: int, first_hour: bool) -> int:
    """Whole minutes rounded up to a quarter hour; 0 counts as 1 in a first hour."""
    if minutes == 0 and first_hour:
        minutes = 1
    return -(-minutes // QUARTER_MINUTES) * QUARTER_MINUTES


def never_paid(start: dt.datetime, paid_until: dt.datetime) -> bool:
    """No paid time on an order: PAID_UNTIL_TS still at START_TS (a "first hour")."""
    return paid_until <= start


def ticket_minutes(start: dt.datetime, paid_until: dt.datetime, now: dt.datetime) -> int:
    """Rounded minutes a ticket owes now: the time overdue past PAID_UNTIL_TS."""
    return rounded_minutes(overdue_minutes(paid_until, now),
                           first_hour=never_paid(start, paid_until))


def session_minutes(version: int, text: str) -> int | None:
    """Rounded minutes of a session without ticket, from `duration` (v>=1: whole
    minutes) or v0's `hours` (a decimal); None when it is not a positive number."""
    if version == 0:
        try:
            hours = Decimal(text.strip())
        except (InvalidOperation, AttributeError):
            return None
        if not hours.is_finite() or hours <= 0:
            return None
        minutes = minutes_of_hours(hours)
    else:
        if not text.isascii() or not text.isdigit() or int(text) <= 0:
            return None
        minutes = int(text)
    return rounded_minutes(minutes, first_hour=True)


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
