"""Summary statistics and the stop rules of methodology.md.

The confidence interval uses Student's t distribution, since cases stop after as
few as 5 iterations where the normal approximation is too optimistic.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# two-sided 95% quantiles t(0.975, df) for df = 1..30
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def t975(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval with `df` degrees of freedom."""
    if df < 1:
        raise ValueError("need at least 2 samples for a confidence interval")
    if df <= len(_T975):
        return _T975[df - 1]
    # Cornish-Fisher expansion around the normal quantile; < 0.001 off for df > 30.
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class Summary:
    """Iteration times (seconds) summarised; `ci95_pct` is the half-width over the mean."""

    n: int
    mean: float
    stdev: float
    min: float
    max: float
    ci95_half: float

    @property
    def ci95_pct(self) -> float:
        return 100.0 * self.ci95_half / self.mean if self.mean > 0 else math.inf


def summarize(samples: list[float]) -> Summary:
    n = len(samples)
    mean = statistics.fmean(samples)
    if n < 2:
        return Summary(n, mean, 0.0, min(samples), max(samples), math.inf)
    stdev = statistics.stdev(samples)
    half = t975(n - 1) * stdev / math.sqrt(n)
    return Summary(n, mean, stdev, min(samples), max(samples), half)


@dataclass(frozen=True)
class StopDecision:
    stop: bool
    unstable: bool = False
    reason: str = ""


class CiStopRule:
    """dbstand's rule: stop when the 95% CI of the mean is within +-target_pct of it.

    Every counted iteration is kept. At the cap the case stops and is flagged
    unstable if the interval is still too wide.
    """

    name = "ci"

    def __init__(self, target_pct: float = 3.0, min_iterations: int = 5,
                 max_iterations: int = 30):
        self.target_pct = target_pct
        self.min_iterations = min_iterations
        self.max_iterations = max_iterations

    def decide(self, samples: list[float], out_of_time: bool = False) -> StopDecision:
        n = len(samples)
        stable = n >= max(2, self.min_iterations) and \
            summarize(samples).ci95_pct <= self.target_pct
        if stable:
            return StopDecision(True, False, "ci")
        if n >= self.max_iterations:
            return StopDecision(True, True, "max-iterations")
        if out_of_time and n >= 2:
            return StopDecision(True, True, "max-time")
        return StopDecision(False)

    def counted(self, samples: list[float]) -> list[float]:
        return samples


class StudyStopRule:
    """The kv study's rule, offered to reproduce it: the last `window` iterations all
    within `target_pct` of their own mean. Only those are reported (it hides the
    variance of the rejected ones, which is why it is not the default)."""

    name = "study"

    def __init__(self, target_pct: float = 3.0, window: int = 5, max_iterations: int = 30):
        self.target_pct = target_pct
        self.window = window
        self.max_iterations = max_iterations
        self.min_iterations = window

    def decide(self, samples: list[float], out_of_time: bool = False) -> StopDecision:
        if len(samples) >= self.window:
            last = samples[-self.window:]
            mean = statistics.fmean(last)
            if all(abs(x - mean) / mean * 100 < self.target_pct for x in last):
                return StopDecision(True, False, "study-window")
        if len(samples) >= self.max_iterations:
            return StopDecision(True, True, "max-iterations")
        if out_of_time and len(samples) >= 2:
            return StopDecision(True, True, "max-time")
        return StopDecision(False)

    def counted(self, samples: list[float]) -> list[float]:
        return samples[-self.window:] if len(samples) >= self.window else samples


StopRule = CiStopRule | StudyStopRule


def make_stop_rule(name: str, target_pct: float, min_iterations: int,
                   max_iterations: int) -> StopRule:
    if name == "ci":
        return CiStopRule(target_pct, min_iterations, max_iterations)
    if name == "study":
        return StudyStopRule(target_pct, max(min_iterations, 5), max_iterations)
    raise ValueError(f"unknown stop rule {name!r}")
