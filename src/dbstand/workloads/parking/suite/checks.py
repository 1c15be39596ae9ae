"""What a call must answer, and the failure that names the scenario and call.

The spec's pricing is re-derived here from first principles (not read from the
service): minutes rounded up to a quarter hour, a first hour of at least one
minute, 2-decimal money strings. A check that fails raises `SuiteFailure` at once.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from dbstand.errors import DbstandError

#: the seed rows of T_PRODUCT: external parking id -> price per hour
SEED_PRICES = {"1333": Decimal(51), "15001": Decimal(60)}
CENTS = Decimal("0.01")
_TS = re.compile(r"^\d+\.\d{3}$")
_START_TS = re.compile(r"^\d+\.000$")
_MISSING = object()


class SuiteFailure(DbstandError):
    """A call answered something the spec forbids: which scenario, which call, what."""

    def __init__(self, scenario: str, call: str, expected: Any, got: Any):
        self.scenario, self.call, self.expected, self.got = scenario, call, expected, got
        super().__init__(f"{scenario}: {call}: expected {expected}, got {got}")


def rounded_minutes(minutes: int, first_hour: bool) -> int:
    """The spec's rounding: 0 is 1 minute in a first-hour case, then up to 15 min."""
    if minutes == 0 and first_hour:
        minutes = 1
    return -(-minutes // 15) * 15


def cost(minutes: int, per_hour: Decimal, first_hour: bool = True) -> Decimal:
    """Price of `minutes` of parking, rounded as the service must round it."""
    return (Decimal(rounded_minutes(minutes, first_hour)) * per_hour / 60).quantize(
        CENTS, ROUND_HALF_UP)


def money(value: Decimal) -> str:
    return f"{value.quantize(CENTS, ROUND_HALF_UP):.2f}"


def refund(paid_minutes: int, paid: Decimal, seconds_left: int) -> Decimal:
    """stop_service's delta: unused whole quarter hours at the price actually paid."""
    left = (seconds_left - 1) // 900 * 15
    return (paid / paid_minutes * left).quantize(CENTS, ROUND_HALF_UP)


class Checker:
    """Checks of one call's answer, failing with the scenario and call named."""

    def __init__(self, scenario: str, call: str, body: dict[str, Any]):
        self.scenario, self.call, self.body = scenario, call, body

    def fail(self, expected: Any, got: Any) -> None:
        raise SuiteFailure(self.scenario, self.call, expected, got)

    def get(self, path: str) -> Any:
        """A value by dotted path (`info.available_places`), or _MISSING."""
        node: Any = self.body
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return _MISSING
            node = node[part]
        return node

    def equal(self, path: str, expected: Any) -> Any:
        got = self.get(path)
        if got is _MISSING:
            self.fail(f"{path}={expected!r}", f"no {path} in {self.body}")
        if got != expected:
            self.fail(f"{path}={expected!r}", f"{path}={got!r}")
        return got

    def absent(self, path: str) -> None:
        got = self.get(path)
        if got is not _MISSING:
            self.fail(f"no {path}", f"{path}={got!r}")

    def integer(self, path: str) -> int:
        got = self.get(path)
        if not isinstance(got, int) or isinstance(got, bool):
            self.fail(f"{path} an integer", f"{path}={'missing' if got is _MISSING else got!r}")
        return int(got)

    def start_ts(self) -> None:
        got = self.get("info.start_ts")
        if not isinstance(got, str) or not _START_TS.match(got):
            self.fail("info.start_ts as Unix seconds ending '.000'",
                      f"info.start_ts={'missing' if got is _MISSING else got!r}")


def check_envelope(scenario: str, call: str, http_status: int, content_type: str,
                   body: dict[str, Any] | None) -> dict[str, Any]:
    """Every answer: HTTP 200, JSON object with `status` and a 3-decimal `ts`."""
    if http_status != 200:
        raise SuiteFailure(scenario, call, "HTTP 200", f"HTTP {http_status}")
    if "application/json" not in content_type:
        raise SuiteFailure(scenario, call, "Content-Type application/json",
                           f"Content-Type {content_type!r}")
    if body is None:
        raise SuiteFailure(scenario, call, "a JSON object", "a body that is not one")
    if not isinstance(body.get("status"), str):
        raise SuiteFailure(scenario, call, "a string 'status'", body)
    ts = body.get("ts")
    if not isinstance(ts, str) or not _TS.match(ts):
        raise SuiteFailure(scenario, call, "'ts' as Unix time with 3 decimals", f"ts={ts!r}")
    return body
