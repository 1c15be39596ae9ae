"""Pure parts of the service: pricing and refunds (the spec's examples), protocol
parsing, and which driver errors count as lock conflicts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pymysql
import pytest

from dbstand.workloads.parking import pricing
from dbstand.workloads.parking.conflicts import is_conflict
from dbstand.workloads.parking.protocol import BadRequest, parse_descr, parse_version


def test_pricing_examples() -> None:
    assert pricing.fmt_money(pricing.cost(pricing.rounded_minutes(120, True), Decimal(51))) \
        == "102.00"
    assert pricing.rounded_minutes(0, first_hour=True) == 15  # a fresh ticket
    assert pricing.fmt_money(pricing.cost(15, Decimal(60))) == "15.00"
    assert pricing.rounded_minutes(0, first_hour=False) == 0
    assert pricing.rounded_minutes(16, first_hour=False) == 30
    assert pricing.minutes_of_hours(Decimal("0.01")) == 0


def test_session_and_ticket_minutes() -> None:
    assert pricing.session_minutes(1, "120") == 120
    assert pricing.session_minutes(1, "1") == 15
    assert pricing.session_minutes(0, "2") == 120
    assert pricing.session_minutes(0, "0.01") == 15  # 0 whole minutes: a first hour
    for version, text in ((1, "0"), (1, "-5"), (1, "1.5"), (1, ""), (1, "١٢"),
                          (0, "0"), (0, "abc"), (0, "nan"), (0, "")):
        assert pricing.session_minutes(version, text) is None, (version, text)
    start = dt.datetime(2026, 1, 1, 10, 0, 0)
    assert pricing.never_paid(start, start)
    assert pricing.ticket_minutes(start, start, start) == 15  # a fresh ticket
    paid = start + dt.timedelta(hours=1)
    assert pricing.ticket_minutes(start, paid, paid + dt.timedelta(minutes=20)) == 30
    assert pricing.ticket_minutes(start, paid, paid) == 0


def test_refund_of_two_hours_stopped_at_once() -> None:
    start = dt.datetime(2026, 1, 1, 10, 0, 0)
    until = start + dt.timedelta(hours=2)
    for elapsed in (0, 1):  # the clock may tick between paying and stopping
        now = start + dt.timedelta(seconds=elapsed)
        assert pricing.refund(Decimal("102"), start, until, now) == Decimal("89.25")


def test_protocol_parsing() -> None:
    assert [parse_version(v) for v in (None, "", "0", "1", "2", "3", "x", "-1")] == \
        [0, 0, 0, 1, 2, None, None, None]
    assert parse_descr('{"parking_id": "1333"}') == {"parking_id": "1333"}
    for bad in ("{", "[]", '{"duration": 120}'):
        with pytest.raises(BadRequest):
            parse_descr(bad)


def test_lock_conflicts() -> None:
    import peewee
    import psycopg
    import sqlalchemy.exc

    deadlock = pymysql.err.OperationalError(1213, "Deadlock found")
    assert is_conflict(deadlock)
    assert is_conflict(peewee.OperationalError(deadlock))
    assert is_conflict(sqlalchemy.exc.OperationalError("SELECT", {}, deadlock))
    assert is_conflict(psycopg.errors.DeadlockDetected("deadlock detected"))
    import pg8000.dbapi

    assert is_conflict(pg8000.dbapi.DatabaseError({"S": "ERROR", "C": "40P01",
                                                    "M": "deadlock detected"}))
    assert not is_conflict(pg8000.dbapi.DatabaseError({"C": "23505"}))
    assert not is_conflict(pymysql.err.IntegrityError(1062, "Duplicate entry"))
    assert not is_conflict(ValueError("x"))
