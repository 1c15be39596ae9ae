"""The one verdict rule of the studies (studies/verdict.py): for every claim kind,
intervals wholly on the claimed side, wholly on the other side, and across each
threshold; Fieller's ratio interval; placements; orderings."""

from __future__ import annotations

import math
import random

import pytest

from dbstand.studies.claims import Judged, Missing, settle
from dbstand.studies.verdict import (
    CANNOT,
    DIFFERS,
    INCONCLUSIVE,
    REPRODUCED,
    Estimate,
    combine,
    judge,
    ordering,
    ratio,
)


def span(low: float, high: float) -> Estimate:
    """An estimate whose 95% interval is exactly [low, high]."""
    return Estimate((low + high) / 2, bounds=(low, high))


def verdict(low: float, high: float, claim: dict) -> str:
    return judge(span(low, high), claim)[0]


# --- thresholds: each kind, intervals below, across and above every threshold -------------
@pytest.mark.parametrize(("low", "high", "expected"), [
    (1.10, 1.30, REPRODUCED),      # wholly above 1
    (0.95, 1.20, INCONCLUSIVE),    # holds 1
    (0.70, 0.90, DIFFERS),         # wholly below
    (0.80, 1.00, DIFFERS),         # touches 1 from below: nothing above it
    (1.00, 1.20, INCONCLUSIVE),    # 1 itself is not greater than 1
])
def test_greater(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, {"expect": "greater", "than": 1.0}) == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (0.30, 0.45, REPRODUCED), (0.45, 0.55, INCONCLUSIVE), (0.55, 0.90, DIFFERS),
    (0.50, 0.60, DIFFERS), (0.40, 0.50, INCONCLUSIVE),
])
def test_less(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, {"expect": "less", "than": 0.5}) == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (3.0, 4.0, REPRODUCED),        # 3 itself is at least 3
    (3.2, 4.0, REPRODUCED), (2.5, 3.5, INCONCLUSIVE), (2.0, 2.9, DIFFERS),
    (2.0, 3.0, INCONCLUSIVE),      # 3 is still possible
])
def test_at_least(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, {"expect": "at_least", "value": 3.0}) == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (0.5, 1.2, REPRODUCED), (1.0, 1.4, INCONCLUSIVE), (1.3, 1.5, DIFFERS),
    (1.2, 1.5, INCONCLUSIVE),
])
def test_at_most(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, {"expect": "at_most", "value": 1.2}) == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (10, 40, REPRODUCED), (5, 45, REPRODUCED),
    (2, 20, INCONCLUSIVE), (30, 50, INCONCLUSIVE), (2, 60, INCONCLUSIVE),
    (-20, 4, DIFFERS), (46, 60, DIFFERS),
])
def test_between(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, {"expect": "between", "low": 5, "high": 45}) == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (0.85, 1.15, REPRODUCED),      # inside 0.8-1.2, the default ±20%
    (0.75, 1.10, INCONCLUSIVE), (0.90, 1.25, INCONCLUSIVE), (0.50, 1.50, INCONCLUSIVE),
    (0.50, 0.79, DIFFERS), (1.21, 1.40, DIFFERS),
])
def test_about_uses_one_band(low: float, high: float, expected: str) -> None:
    got, why = judge(span(low, high), {"expect": "about", "value": 1.0})
    assert got == expected
    assert "±20%" in why and "default band" in why


def test_about_takes_the_seeds_own_spread() -> None:
    claim = {"expect": "about", "value": 1.0, "spread": 0.03, "spread_from": "3% margin"}
    assert judge(span(0.98, 1.02), claim)[0] == REPRODUCED
    assert judge(span(0.98, 1.05), claim)[0] == INCONCLUSIVE   # crosses 1.03
    assert judge(span(1.04, 1.10), claim)[0] == DIFFERS
    assert "the seed's own spread" in judge(span(1.04, 1.10), claim)[1]
    row = settle({"id": "c", "claim": "x.", **claim}, [("a", span(0.98, 1.02))])
    assert row.verdict == REPRODUCED and "3% margin" in row.note   # said once, in the note


def test_the_point_alone_never_decides() -> None:
    """The old rule passed an "about" claim when the point was in the band although
    the interval left it; now the interval decides."""
    wide = Estimate(1.04, ci_pct=30)          # point within ±20% of 1, interval not
    assert judge(wide, {"expect": "about", "value": 1.0})[0] == INCONCLUSIVE
    assert judge(Estimate(3.2, ci_pct=10), {"expect": "at_least", "value": 3})[0] == \
        INCONCLUSIVE
    assert judge(Estimate(30.0, ci_pct=60), {"expect": "between", "low": 5, "high": 45})[0] \
        == INCONCLUSIVE


def test_no_interval_no_verdict_but_counts_are_exact() -> None:
    assert judge(Estimate(2.0), {"expect": "greater", "than": 1})[0] == INCONCLUSIVE
    assert judge(Estimate(2.0, exact=True), {"expect": "greater", "than": 1})[0] == REPRODUCED
    assert judge(Estimate(0.9, exact=True), {"expect": "greater", "than": 1})[0] == DIFFERS


def test_an_unknown_expectation_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown expectation"):
        judge(span(1, 2), {"expect": "roughly"})


# --- the ratio's interval -------------------------------------------------------------------
def test_fieller_interval_by_its_definition() -> None:
    a, b = Estimate(200.0, ci_pct=3), Estimate(100.0, ci_pct=4)
    r = ratio(a, b)
    assert r.value == 2.0
    ha, hb = 6.0, 4.0
    for bound in (r.low, r.high):   # each bound solves (a - r b)^2 = ha^2 + r^2 hb^2
        assert (200 - bound * 100) ** 2 == pytest.approx(ha ** 2 + bound ** 2 * hb ** 2)
    assert r.low < 2.0 < r.high and r.high - 2.0 > 2.0 - r.low   # skewed upwards


def test_fieller_covers_the_true_ratio_about_95_percent() -> None:
    """Simulated normal means with known SEs: the interval holds the true ratio in
    about 95% of draws (z-based halves, so the rule's premise holds exactly)."""
    rng = random.Random(7)
    true_a, true_b, se_a, se_b = 150.0, 100.0, 4.0, 5.0
    hits = 0
    for _ in range(4000):
        a = rng.gauss(true_a, se_a)
        b = rng.gauss(true_b, se_b)
        r = ratio(Estimate(a, ci_pct=196 * se_a / a), Estimate(b, ci_pct=196 * se_b / b))
        hits += r.low <= true_a / true_b <= r.high
    assert 0.93 < hits / 4000 < 0.97


def test_ratio_edges() -> None:
    assert ratio(Estimate(5, exact=True), Estimate(2, exact=True)).exact
    assert not ratio(Estimate(5, ci_pct=3), Estimate(2)).has_interval
    loose = ratio(Estimate(5, ci_pct=3), Estimate(2, ci_pct=120))   # bottom may be 0
    assert math.isinf(loose.high)
    assert judge(loose, {"expect": "greater", "than": 1})[0] == INCONCLUSIVE
    shaky = ratio(Estimate(5, ci_pct=3, shaky=True), Estimate(2, ci_pct=3))
    assert shaky.shaky


def test_a_ratio_across_placements_is_refused() -> None:
    a = Estimate(300.0, ci_pct=1, placement="client 0, server 1")
    b = Estimate(100.0, ci_pct=1, placement="client 0, server 0")
    r = ratio(a, b)
    got, why = judge(r, {"expect": "greater", "than": 1})
    assert got == INCONCLUSIVE and "different CPU placements" in why
    same = ratio(a, Estimate(100.0, ci_pct=1, placement="client 0, server 1"))
    assert judge(same, {"expect": "greater", "than": 1})[0] == REPRODUCED


# --- orderings and several measurements of one claim ----------------------------------------
def test_ordering_needs_every_adjacent_pair_above_one() -> None:
    fast, mid, slow = Estimate(300, ci_pct=2), Estimate(200, ci_pct=2), Estimate(100, ci_pct=2)
    assert ordering([("a", fast), ("b", mid), ("c", slow)])[0] == REPRODUCED
    assert ordering([("a", fast), ("c", slow), ("b", mid)])[0] == DIFFERS
    close = Estimate(195, ci_pct=5)
    got, pairs = ordering([("a", fast), ("b", mid), ("b2", close)])
    assert got == INCONCLUSIVE and pairs[1][2] == INCONCLUSIVE
    # lower is better (seconds): the first should have the smallest figure
    assert ordering([("c", slow), ("b", mid), ("a", fast)], higher_first=False)[0] == \
        REPRODUCED


def test_combining_measurements() -> None:
    assert combine([REPRODUCED, REPRODUCED]) == REPRODUCED
    assert combine([REPRODUCED, INCONCLUSIVE]) == INCONCLUSIVE
    assert combine([REPRODUCED, INCONCLUSIVE, DIFFERS]) == DIFFERS
    assert combine([]) == INCONCLUSIVE


def test_settling_a_claim() -> None:
    claim = {"id": "c", "claim": "x is faster.", "expect": "greater", "than": 1.0}
    both = settle(claim, [("select", span(1.5, 2.5)), ("update", span(0.8, 0.95))],
                  stand_in="a stand-in")
    assert both.verdict == DIFFERS and "1 reproduced, 1 differs of 2" in both.reason
    assert "[1.5, 2.5]" in both.measured and both.stand_in == "a stand-in"
    unsure = settle(claim, [("select", span(0.9, 1.2))])
    assert unsure.verdict == INCONCLUSIVE and "holds 1" in unsure.reason
    assert settle(claim, []).verdict == INCONCLUSIVE
    assert settle(claim, "its stack did not run").verdict == INCONCLUSIVE
    gone = settle(claim, Missing("PyMongo 2.8"), stand_in="x")
    assert gone.verdict == CANNOT and "PyMongo 2.8" in gone.reason and gone.stand_in == ""
    assert settle(claim, Judged(REPRODUCED, "25", "plateau")).measured == "25"
    shaky = settle(claim, [("select", Estimate(2.0, ci_pct=5, shaky=True))])
    assert shaky.verdict == REPRODUCED and "unstable" in shaky.reason
