"""Clock and value conversions shared by the schema and every implementation.

Timestamps are local time in whole seconds; money is exact Decimal. SQLite has no
exact decimal or datetime type, so there both are stored as text in one fixed form
("%.6f", "YYYY-MM-DD HH:MM:SS") that compares correctly as strings.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbstand.sql.dialects import Dialect

TS_FORMAT = "%Y-%m-%d %H:%M:%S"


def now() -> dt.datetime:
    """Local time, whole seconds (the spec's timestamps)."""
    return dt.datetime.now().replace(microsecond=0)


def unix_seconds(stamp: dt.datetime) -> int:
    """A local naive timestamp as Unix seconds."""
    return int(stamp.timestamp())


def money_text(value: Decimal) -> str:
    """The text form of decimal(16,6) used on SQLite."""
    return f"{Decimal(value):.6f}"


def to_money(value: Any) -> Decimal:
    """A money value read from any driver (Decimal, text, int) as Decimal."""
    return value if isinstance(value, Decimal) else Decimal(str(value))


def ts_text(stamp: dt.datetime) -> str:
    return stamp.strftime(TS_FORMAT)


def to_ts(value: Any) -> dt.datetime:
    """A timestamp read from any driver (datetime or SQLite text) as naive datetime."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return dt.datetime.strptime(str(value)[:19], TS_FORMAT)


def db_money(dialect: Dialect, value: Decimal | None) -> Any:
    """Money as a DB-API parameter in `dialect` (text where decimals travel as text)."""
    if value is None:
        return None
    return money_text(value) if dialect.decimal_as_text else Decimal(value)
