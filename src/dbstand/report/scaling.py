"""How a batch's cost grows with its row count: a power law fitted over the sizes run.

seconds ~ a * rows^b, fitted as log(seconds) = log(a) + b log(rows) by least
squares. b near 1 is linear (each row costs the same, however many there are);
b clearly above 1 means each row gets dearer as the table or batch grows: a
statement that stopped using the key's index, a per-page scan, lock or memory
pressure. The study's update and delete cells grew like that (seed 002), which is
why every (api, op) gets a verdict. b well below 1 means fixed costs (round trips,
process start, COMMIT) still dominate at these sizes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

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
    verdict: str          # linear | superlinear | sublinear

    @property
    def confident(self) -> bool:
        return self.sizes >= CONFIDENT_SIZES

    @property
    def superlinear(self) -> bool:
        return self.verdict == "superlinear"

    def label(self) -> str:
        return self.verdict if self.confident else f"{self.verdict} ({self.sizes} sizes)"


def fit_power_law(points: Iterable[tuple[float, float]]) -> tuple[float, float | None] | None:
    """Least-squares (exponent, r2) of log(seconds) on log(rows); None under 2 sizes."""
    pts = [(math.log(n), math.log(s)) for n, s in points if n > 0 and s > 0]
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


def scaling(points: Iterable[tuple[float, float]]) -> ScalingFit | None:
    """The verdict for (rows, mean seconds) points of one (stack, api, op)."""
    pts = list(points)
    fitted = fit_power_law(pts)
    if fitted is None:
        return None
    b, r2 = fitted
    if b > SUPERLINEAR_EXPONENT:
        verdict = "superlinear"
    elif b < SUBLINEAR_EXPONENT:
        verdict = "sublinear"
    else:
        verdict = "linear"
    return ScalingFit(round(b, 3), len({n for n, _ in pts}), None if r2 is None else
                      round(r2, 4), verdict)
