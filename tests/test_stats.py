"""The stop rules and statistics, fed known timings (pure logic)."""

from __future__ import annotations

import math
import random

import pytest

from dbstand.engine.stats import CiStopRule, StudyStopRule, summarize, t975


def test_t_quantiles_match_tables() -> None:
    assert t975(1) == pytest.approx(12.706)
    assert t975(4) == pytest.approx(2.776)
    assert t975(30) == pytest.approx(2.042)
    assert t975(60) == pytest.approx(2.000, abs=0.002)
    assert t975(1000) == pytest.approx(1.962, abs=0.002)


def test_summary_confidence_interval() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.mean == 3.0
    assert s.stdev == pytest.approx(math.sqrt(2.5))
    assert s.ci95_half == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-3)
    assert s.ci95_pct == pytest.approx(100 * s.ci95_half / 3.0)


def feed(rule: CiStopRule | StudyStopRule, samples: list[float]) -> tuple[int, bool]:
    """Feed samples one by one like the engine; return (iterations used, unstable)."""
    seen: list[float] = []
    for x in samples:
        seen.append(x)
        decision = rule.decide(seen)
        if decision.stop:
            return len(seen), decision.unstable
    raise AssertionError("rule never stopped")


def test_steady_case_stops_at_minimum() -> None:
    rng = random.Random(1)
    steady = [1.0 + rng.uniform(-0.005, 0.005) for _ in range(50)]
    n, unstable = feed(CiStopRule(3.0, 5, 30), steady)
    assert (n, unstable) == (5, False)


def test_wild_case_is_flagged_unstable_at_cap() -> None:
    rng = random.Random(2)
    wild = [rng.choice([0.5, 1.0, 2.0]) for _ in range(50)]
    n, unstable = feed(CiStopRule(3.0, 5, 30), wild)
    assert (n, unstable) == (30, True)


def test_moderate_noise_needs_more_iterations_but_converges() -> None:
    rng = random.Random(3)
    noisy = [1.0 + rng.gauss(0, 0.05) for _ in range(200)]
    n, unstable = feed(CiStopRule(3.0, 5, 100), noisy)
    assert 5 < n < 100 and not unstable


def test_out_of_time_stops_unstable() -> None:
    rule = CiStopRule(3.0, 5, 30)
    decision = rule.decide([1.0, 2.0, 1.0], out_of_time=True)
    assert decision.stop and decision.unstable and decision.reason == "max-time"


def test_study_rule_reports_only_its_window() -> None:
    rule = StudyStopRule(3.0, 5, 30)
    samples = [2.0, 1.5, 1.0, 1.01, 0.99, 1.0, 1.005]
    n, unstable = feed(rule, samples)
    assert not unstable
    assert n == 7
    assert rule.counted(samples[:n]) == samples[2:7]
