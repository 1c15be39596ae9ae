"""How a batch's cost grows with its row count: a power law fitted over the sizes run.

seconds ~ a * rows^b, fitted as log(seconds) = log(a) + b log(rows) by least
squares. b near 1 is linear (each row costs the same, however many there are);
b clearly above 1 means each row gets dearer as the table or batch grows: a
statement that stopped using the key's index, a per-page scan, lock or memory
pressure. The study's update and delete cells grew like that (seed 002), which is
why every (api, op) gets a verdict. b well below 1 means fixed costs (round trips,
process start, COMMIT) still dominate at these sizes.

"Clearly" superlinear also needs the spread to agree, as the methodology's verdict
rule does for claims (the whole interval must satisfy the claim): the growth from the
smallest to the largest size, read in the light most favourable to linearity (the
fastest run of the largest size against the slowest run of the smallest), must itself
be above the threshold. Beating 1.0 is not enough: that reading of a linear path sits
at 1.0 give or take its noise, so it beats 1.0 about half the time, and one preempted
run of the largest size bends the means' fit above the threshold (seen: SQLite's
deletes by key, ~1 ms a batch, called superlinear on a busy 2-core machine).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: (rows, mean seconds) or (rows, mean seconds, fastest run, slowest run)
Point = Sequence[float]

#: cost growing faster than rows^1.3 is flagged: between 10k and 100k rows that is
#: 2x the time per row, far beyond run-to-run noise
SUPERLINEAR_EXPONENT = 1.3
#: below this, fixed costs dominate the sizes run
SUBLINEAR_EXPONENT = 0.8
#: a fit needs two sizes; three or more make a verdict confident
MIN_SIZES = 2
CONFIDENT_SIZES = 3


@dataclass(frozen=True)
class ScalingFit:
    exponent: float
    sizes: int
    r2: float | None      # goodness of fit (None with two sizes: a line fits any two)
    verdict: str          # linear | superlinear | superlinear? | sublinear
    exponent_low: float   # smallest-to-largest growth read most favourably to linearity

    @property
    def confident(self) -> bool:
        return self.sizes >= CONFIDENT_SIZES

    @property
    def superlinear(self) -> bool:
        return self.verdict == "superlinear"

    @property
    def flagged(self) -> bool:
        """Superlinear on enough sizes to say so out loud (two points fit any line)."""
        return self.superlinear and self.confident

    def label(self) -> str:
        return self.verdict if self.confident else f"{self.verdict} ({self.sizes} sizes)"


def fit_power_law(points: Iterable[Point]) -> tuple[float, float | None] | None:
    """Least-squares (exponent, r2) of log(seconds) on log(rows); None under 2 sizes."""
    pts = [(math.log(p[0]), math.log(p[1])) for p in points if p[0] > 0 and p[1] > 0]
    if len({x for x, _ in pts}) < MIN_SIZES:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    b = sxy / sxx
    syy = sum((y - my) ** 2 for _, y in pts)
    r2 = None
    if len({x for x, _ in pts}) >= CONFIDENT_SIZES:
        r2 = 1.0 if syy == 0 else max(0.0, 1 - sum((y - my - b * (x - mx)) ** 2
                                                   for x, y in pts) / syy)
    return b, r2


def favourable_exponent(points: Sequence[Point]) -> float:
    """Growth exponent from the smallest to the largest size, using the fastest run of
    the largest and the slowest run of the smallest (the means without a spread)."""
    first = min(points, key=lambda p: p[0])
    last = max(points, key=lambda p: p[0])
    slow_small = first[3] if len(first) > 3 else first[1]
    fast_large = last[2] if len(last) > 2 else last[1]
    return math.log(fast_large / slow_small) / math.log(last[0] / first[0])


def scaling(points: Iterable[Point]) -> ScalingFit | None:
    """The verdict for the points of one (stack, api, op): (rows, mean seconds), with
    the fastest and slowest run when known."""
    pts = [p for p in points if p[0] > 0 and p[1] > 0]
    fitted = fit_power_law(pts)
    if fitted is None:
        return None
    b, r2 = fitted
    low = favourable_exponent(pts)
    if b > SUPERLINEAR_EXPONENT:
        verdict = "superlinear" if low > SUPERLINEAR_EXPONENT else "superlinear?"
    elif b < SUBLINEAR_EXPONENT:
        verdict = "sublinear"
    else:
        verdict = "linear"
    return ScalingFit(round(b, 3), len({p[0] for p in pts}), None if r2 is None else
                      round(r2, 4), verdict, round(low, 3))
