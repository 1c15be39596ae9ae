"""The parking conformance suite (specs/parking.md): a client only, for any base URL.

A pass is five scenarios, 68 calls with the study's per-function profile; every
answer's status and status_code are checked, and the amounts that follow from the
spec (prices, refunds, balances, places). A failed check raises `SuiteFailure`.

Every user, plate and transaction id a pass makes is new for the whole run, by
construction (ids.py: a per-process serial after a random head), across concurrent
users and processes: the tables outlive a pass, and a reused user would start with an
earlier pass's balance.
"""

from dbstand.workloads.parking.suite.checks import SuiteFailure
from dbstand.workloads.parking.suite.client import ParkingClient
from dbstand.workloads.parking.suite.runner import (
    CALLS_PER_PASS,
    PASS_DELTAS,
    PLACES_PER_PASS,
    PROFILE,
    SCENARIOS,
    PassReport,
    ScenarioOutcome,
    ScenarioVerdict,
    expected_totals,
    run_pass,
    totals_mismatch,
    verify,
)

__all__ = ["CALLS_PER_PASS", "PASS_DELTAS", "PLACES_PER_PASS", "PROFILE", "SCENARIOS",
           "ParkingClient", "PassReport", "ScenarioOutcome", "ScenarioVerdict",
           "SuiteFailure", "expected_totals", "run_pass", "totals_mismatch", "verify"]
