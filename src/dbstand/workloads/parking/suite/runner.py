"""One pass of the suite: the five scenarios in order, 68 calls, profile enforced."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dbstand.workloads.parking.suite.accounts import refunds, transfers
from dbstand.workloads.parking.suite.checks import SuiteFailure
from dbstand.workloads.parking.suite.client import ParkingClient
from dbstand.workloads.parking.suite.context import Ctx
from dbstand.workloads.parking.suite.sessions import postpaid, prepaid
from dbstand.workloads.parking.suite.versions import versions

Scenario = Callable[[Ctx], None]

SCENARIOS: tuple[tuple[str, Scenario], ...] = (
    ("prepaid", prepaid), ("postpaid", postpaid), ("refunds", refunds),
    ("transfers", transfers), ("versions", versions))

#: calls per pass by function: the study's table 1 (68 calls)
PROFILE: dict[str, int] = {
    "get_service_info": 22, "create_reservation": 10, "pay_reservation": 8,
    "get_user_account": 7, "stop_service": 6, "account_transfer": 6,
    "cancel_reservation": 4, "check_plate_number": 3, "leave_parking": 1,
    "issue_ticket": 1}
CALLS_PER_PASS = sum(PROFILE.values())
#: what one pass does to the seed parks' places: 4 paid sessions in 1333 keep theirs
PLACES_PER_PASS = {"1333": -4, "15001": 0}
#: what one complete pass adds to the service's totals (ServiceHandle.totals()): rows,
#: and money (two refunds of 89.25, one 51.00 paid from a balance, one transfer)
PASS_DELTAS: dict[str, Any] = {
    "orders": 6, "open_orders": 4, "payments": 6, "paid_payments": 5,
    "cancelled_payments": 1, "accounts": 3, "account_receipts": 2, "account_consumes": 2,
    "account_transfers": 1, "balance": Decimal("127.50"), "reserved": Decimal(0),
    "receipt_amount": Decimal("178.50"), "consumed_amount": Decimal("51.00"),
    "transfer_amount": Decimal("89.25"), "paid_amount": Decimal("193.50")}


def expected_totals(before: dict[str, Any], passes: int) -> dict[str, Any]:
    """The totals `passes` complete passes must leave, from the totals `before`: a lost
    update (places, balances) or a stray write shows as a difference."""
    out = {k: before[k] + v * passes for k, v in PASS_DELTAS.items() if k in before}
    out["places"] = {park: n + PLACES_PER_PASS.get(park, 0) * passes
                     for park, n in before.get("places", {}).items()}
    return out


def totals_mismatch(before: dict[str, Any], after: dict[str, Any],
                    passes: int) -> dict[str, tuple[Any, Any]]:
    """{figure: (expected, got)} for every figure that is not what the passes imply."""
    expected = expected_totals(before, passes)
    return {k: (v, after.get(k)) for k, v in expected.items() if after.get(k) != v}


@dataclass
class ScenarioOutcome:
    name: str
    calls: int
    seconds: float
    failure: SuiteFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass
class PassReport:
    scenarios: list[ScenarioOutcome] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.scenarios)

    @property
    def failures(self) -> list[SuiteFailure]:
        return [s.failure for s in self.scenarios if s.failure is not None]


def run_pass(client: ParkingClient, rng: random.Random | None = None, *,
             exclusive: bool = True, keep_going: bool = False) -> PassReport:
    """Run the five scenarios with fresh users and plates.

    `exclusive`: no other client is using the service, so place counts are checked
    exactly. `keep_going`: a failed scenario is recorded and the next one runs (each
    has its own users); otherwise the first SuiteFailure propagates. A complete pass
    must have made exactly the PROFILE's calls.
    """
    ctx = Ctx(client, rng or random.Random(), exclusive)
    report = PassReport()
    for name, scenario in SCENARIOS:
        ctx.scenario = name
        first = len(ctx.calls)
        started = time.perf_counter()
        failure: SuiteFailure | None = None
        try:
            scenario(ctx)
        except SuiteFailure as exc:
            if not keep_going:
                raise
            failure = exc
        report.scenarios.append(ScenarioOutcome(name, len(ctx.calls) - first,
                                                time.perf_counter() - started, failure))
    report.calls = Counter(ctx.calls)
    if report.ok and dict(report.calls) != PROFILE:
        raise SuiteFailure("pass", "call profile", PROFILE, dict(report.calls))
    return report


@dataclass
class ScenarioVerdict:
    """A scenario over several passes: how many passed, and its first failure."""

    name: str
    passed: int = 0
    runs: int = 0
    calls: int = 0
    first_failure: SuiteFailure | None = None

    @property
    def ok(self) -> bool:
        return self.passed == self.runs and self.runs > 0


def verify(client: ParkingClient, passes: int = 1) -> tuple[list[ScenarioVerdict],
                                                             SuiteFailure | None]:
    """Run `passes` exclusive passes, every scenario of each; per-scenario verdicts and
    a pass-level failure (the call profile), if any."""
    verdicts = {name: ScenarioVerdict(name) for name, _ in SCENARIOS}
    for _ in range(passes):
        try:
            report = run_pass(client, exclusive=True, keep_going=True)
        except SuiteFailure as exc:
            return list(verdicts.values()), exc
        for outcome in report.scenarios:
            v = verdicts[outcome.name]
            v.runs += 1
            v.calls = outcome.calls
            v.passed += outcome.ok
            if outcome.failure is not None and v.first_failure is None:
                v.first_failure = outcome.failure
    return list(verdicts.values()), None
