"""The one verdict rule of every study claim (docs/studies/README.md, "Verdicts").

A claim is judged on the 95% interval of what it is about (most often a ratio of
two measured means): REPRODUCED when the whole interval satisfies the claim,
DIFFERS when the whole interval contradicts it, INCONCLUSIVE otherwise. The
interval is always printed beside the verdict. A ratio's interval comes from both
means' intervals by Fieller's theorem (`ratio`), so it is exact for normal means
and asymmetric, as a ratio's interval is. "About X" claims use one band, the seed's
own spread where it states one, else ±20% (`ABOUT_BAND`). An ordering (A > B > C)
is REPRODUCED only when every adjacent pair's ratio interval lies above 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

REPRODUCED = "reproduced"
DIFFERS = "differs"
INCONCLUSIVE = "inconclusive"
CANNOT = "cannot be checked"

#: the band of an "about X" claim whose seed gives no spread of its own: X ±20%
ABOUT_BAND = 0.20


@dataclass(frozen=True)
class Estimate:
    """A measured figure or ratio and its 95% interval.

    A measured mean carries its half-width in % of it (`ci_pct`); a ratio carries the
    bounds Fieller's interval gave (`bounds`, possibly unbounded above: inf); a count
    is `exact` (its interval is the value). With none of the three the figure has no
    interval and no claim can be judged on it. `placement` is the CPU placement the
    figure was measured under: a ratio across two placements is refused."""

    value: float
    ci_pct: float | None = None
    shaky: bool = False           # from an unstable or bimodal case
    bounds: tuple[float, float] | None = None
    exact: bool = False
    placement: str | None = None
    unfair: str = ""              # why the figure may not be compared (set by `ratio`)

    @property
    def has_interval(self) -> bool:
        return self.exact or self.bounds is not None or (
            self.ci_pct is not None and math.isfinite(self.ci_pct))

    def _end(self, side: int) -> float:
        """The interval's low (side -1) or high (+1) end: the bounds given, the value
        itself when exact or without an interval, else the value -/+ its CI."""
        if self.bounds is not None:
            return self.bounds[0 if side < 0 else 1]
        if self.exact or not self.has_interval:
            return self.value
        return self.value * (1 + side * (self.ci_pct or 0) / 100)

    @property
    def low(self) -> float:
        return self._end(-1)

    @property
    def high(self) -> float:
        return self._end(+1)

    def interval(self) -> str:
        """The interval as printed beside every verdict."""
        if self.exact:
            return "exact count"
        if not self.has_interval:
            return "no interval"
        return f"95% interval [{num(self.low)}, {num(self.high)}]"

    def text(self, unit: str = "x", digits: int = 2) -> str:
        body = f"{self.value:,.{digits}f}{unit}"
        if self.has_interval and not self.exact:
            body += f" [{num(self.low)}, {num(self.high)}]"
        return body + (" (unstable)" if self.shaky else "")


def num(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def _half(e: Estimate) -> float | None:
    """The absolute half-width of a measured mean's interval (0 for a count)."""
    if e.exact:
        return 0.0
    if e.ci_pct is None or not math.isfinite(e.ci_pct):
        return None
    return abs(e.value) * e.ci_pct / 100


def ratio(top: Estimate, bottom: Estimate) -> Estimate:
    """top / bottom with Fieller's 95% interval from both means' intervals.

    Each side's half-width h stands for its critical value times its standard error
    (each at its own degrees of freedom), the two sides independent. The ratio's
    interval is the set of r with (a - r b)^2 <= h_a^2 + r^2 h_b^2. When the bottom's
    interval holds 0 the ratio is unbounded above. Two figures measured under
    different CPU placements give a ratio marked `unfair` (judged INCONCLUSIVE)."""
    value = top.value / bottom.value
    shaky = top.shaky or bottom.shaky
    unfair = top.unfair or bottom.unfair
    if top.placement and bottom.placement and top.placement != bottom.placement:
        unfair = f"measured under different CPU placements ({top.placement} vs " \
                 f"{bottom.placement}): not comparable"
    placement = top.placement if top.placement == bottom.placement else None
    ha, hb = _half(top), _half(bottom)
    if ha is None or hb is None:
        return Estimate(value, None, shaky, placement=placement, unfair=unfair)
    if ha == 0 and hb == 0:
        return Estimate(value, None, shaky, exact=True, placement=placement, unfair=unfair)
    a, b = top.value, bottom.value
    q = b * b - hb * hb
    if q <= 0:  # the bottom's interval holds 0: no upper bound
        return Estimate(value, None, shaky, bounds=(0.0, math.inf), placement=placement,
                        unfair=unfair)
    disc = a * a * hb * hb + b * b * ha * ha - ha * ha * hb * hb
    root = math.sqrt(max(disc, 0.0))
    low, high = (a * b - root) / q, (a * b + root) / q
    return Estimate(value, None, shaky, bounds=(max(low, 0.0) if a >= 0 else low, high),
                    placement=placement, unfair=unfair)


def about_band(claim: Mapping[str, Any]) -> tuple[float, str]:
    """The band of an "about" claim and where it comes from."""
    if "spread" in claim:   # where it comes from is printed once, in the claim's note
        return float(claim["spread"]), "the seed's own spread"
    return ABOUT_BAND, "the default band"


def judge(est: Estimate, claim: Mapping[str, Any]) -> tuple[str, str]:
    """The verdict of one estimate against the claim's expectation, and why."""
    expect = str(claim.get("expect", "greater"))
    if expect not in KINDS:
        raise ValueError(f"unknown expectation {expect!r}")
    where = est.interval()
    if est.unfair:
        return INCONCLUSIVE, est.unfair
    if not est.has_interval:
        return INCONCLUSIVE, "no interval recorded for this figure, so no verdict"
    lo, hi = est.low, est.high
    if expect in ("greater", "less", "at_least", "at_most"):
        t = float(claim["than"] if expect in ("greater", "less") else claim["value"])
        up = expect in ("greater", "at_least")
        strict = expect in ("greater", "less")
        # satisfied: the whole interval on the claimed side (strictly for greater/less);
        # contradicted: the whole interval on the other side (t itself satisfies an
        # at_least/at_most claim, and contradicts a greater/less one)
        if up:
            satisfied = lo > t if strict else lo >= t
            contradicted = hi <= t if strict else hi < t
        else:
            satisfied = hi < t if strict else hi <= t
            contradicted = lo >= t if strict else lo > t
        word = {"greater": "above", "less": "below", "at_least": "at least",
                "at_most": "at most"}[expect]
        if satisfied:
            return REPRODUCED, f"whole {where} {word} {t:g}"
        if contradicted:
            return DIFFERS, f"whole {where} on the other side of {t:g}"
        return INCONCLUSIVE, f"the {where} holds {t:g}"
    if expect == "about":
        target = float(claim["value"])
        band, source = about_band(claim)
        low, high = target * (1 - band), target * (1 + band)
        what = f"{target:g} ±{band:.0%} ({source}: [{low:.3g}, {high:.3g}])"
    else:  # between
        low, high = float(claim["low"]), float(claim["high"])
        what = f"[{low:g}, {high:g}]"
    if low <= lo and hi <= high:
        return REPRODUCED, f"whole {where} within {what}"
    if hi < low or lo > high:
        return DIFFERS, f"whole {where} outside {what}"
    return INCONCLUSIVE, f"the {where} crosses an edge of {what}"


KINDS = ("greater", "less", "at_least", "at_most", "about", "between")


def combine(verdicts: Sequence[str]) -> str:
    """Several measurements of one claim (every op, every stack, every size): it is
    reproduced when all are, contradicted when any is, inconclusive otherwise."""
    if verdicts and all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    if any(v == DIFFERS for v in verdicts):
        return DIFFERS
    return INCONCLUSIVE


def ordering(figures: Sequence[tuple[str, Estimate]], higher_first: bool = True
             ) -> tuple[str, list[tuple[str, Estimate, str, str]]]:
    """An ordering claim (first > second > ...): each adjacent pair's ratio judged
    against 1; reproduced only when every pair lies on the right side of 1."""
    pairs = []
    for (a_name, a), (b_name, b) in pairwise(figures):
        r = ratio(a, b) if higher_first else ratio(b, a)
        verdict, why = judge(r, {"expect": "greater", "than": 1.0})
        pairs.append((f"{a_name}/{b_name}" if higher_first else f"{b_name}/{a_name}", r,
                      verdict, why))
    return combine([v for *_, v, _ in pairs]), pairs
