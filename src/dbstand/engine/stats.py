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


def still_faster(times: list[float], target_pct: float) -> bool:
    """Whether the last of `times` (per iteration, or per request) beat the one before
    it by more than `target_pct`: a warm-up that is still speeding up (caches, pools,
    JIT compilers, the scheduler settling) goes on while this holds."""
    return len(times) >= 2 and times[-1] < times[-2] * (1 - target_pct / 100)


def make_stop_rule(name: str, target_pct: float, min_iterations: int,
                   max_iterations: int) -> StopRule:
    if name == "ci":
        return CiStopRule(target_pct, min_iterations, max_iterations)
    if name == "study":
        return StudyStopRule(target_pct, max(min_iterations, 5), max_iterations)
    raise ValueError(f"unknown stop rule {name!r}")


# --- bimodal iteration times (methodology: "Holding still on a small machine") -------

#: each cluster must hold at least this share of the iterations (and 3 of them)
BIMODAL_MIN_SHARE = 0.2
#: fewer iterations than this cannot tell two clusters from a spread-out one
BIMODAL_MIN_ITERATIONS = 10
#: the clusters' means must differ by more than this many pooled standard deviations
BIMODAL_MIN_SEPARATION = 6.0
#: ... and the empty band between them must be wider than one pooled standard deviation
BIMODAL_MIN_GAP = 1.0


@dataclass(frozen=True)
class Cluster:
    """One mode of a bimodal case: its iterations' mean time and share."""

    mean: float
    stdev: float
    n: int
    share: float


@dataclass(frozen=True)
class Bimodal:
    """Two clusters of iteration times: `fast` (shorter times) and `slow`.

    A round-trip-bound case whose client and server share a CPU in some iterations
    and not in others looks like this; the mean of the two describes no iteration
    that ran, so reports show both modes with their shares instead."""

    fast: Cluster
    slow: Cluster
    separation: float     # (slow mean - fast mean) / pooled standard deviation
    gap: float            # empty band between the clusters / pooled standard deviation

    def as_dict(self, revs: int = 1) -> dict[str, object]:
        """The record's form: each mode as ops/s (revs per iteration) with its share."""
        def finite(x: float) -> float | None:
            return round(x, 2) if math.isfinite(x) else None

        return {"modes": [{"ops_per_s": round(revs / c.mean, 1), "share": round(c.share, 3),
                           "iterations": c.n, "mean_s": c.mean}
                          for c in (self.fast, self.slow)],
                "separation_sd": finite(self.separation), "gap_sd": finite(self.gap)}


def _cluster(xs: list[float], n: int) -> Cluster:
    return Cluster(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0,
                   len(xs), len(xs) / n)


def find_bimodal(samples: list[float], min_share: float = BIMODAL_MIN_SHARE,
                 min_separation: float = BIMODAL_MIN_SEPARATION,
                 min_gap: float = BIMODAL_MIN_GAP) -> Bimodal | None:
    """Two clusters of iteration times, or None.

    The sorted times are split at their widest gap among the splits that leave at
    least `min_share` of the iterations (and three) on each side. The case is bimodal
    when the two sides' means differ by more than `min_separation` pooled standard
    deviations and the gap itself is wider than `min_gap` of them.

    Why so strict: cutting any one-humped sample in two shrinks each side's spread,
    so a plain "means 3 SD apart" test calls about half of all normal samples of 10
    bimodal (and most uniform ones). With these thresholds, simulated one-humped
    samples (normal, log-normal, uniform, exponential tail) are called bimodal in
    under 8% of samples of 10 and under 2% of 15 or more, while two clusters 10 SD
    apart are found in about 9 of 10 samples.
    """
    n = len(samples)
    smallest = max(3, math.ceil(min_share * n))
    if n < max(BIMODAL_MIN_ITERATIONS, 2 * smallest):
        return None
    xs = sorted(samples)
    split = max(range(smallest, n - smallest + 1), key=lambda k: xs[k] - xs[k - 1])
    fast, slow = _cluster(xs[:split], n), _cluster(xs[split:], n)
    diff, gap = slow.mean - fast.mean, xs[split] - xs[split - 1]
    if diff <= 0 or gap <= 0:
        return None
    pooled = math.sqrt(((fast.n - 1) * fast.stdev ** 2 + (slow.n - 1) * slow.stdev ** 2)
                       / (n - 2))
    if pooled == 0:
        return Bimodal(fast, slow, math.inf, math.inf)
    if diff / pooled <= min_separation or gap / pooled <= min_gap:
        return None
    return Bimodal(fast, slow, diff / pooled, gap / pooled)
