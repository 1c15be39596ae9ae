"""The machine's own speed beside a case: is the interval the stack's, or the CPU's?

On a virtual machine the CPU under a benchmark is itself a variable: the host moves
the virtual CPU between cores, shares a core with a neighbour's work, changes its
clock. No placement or repeat count inside the guest removes that. So after every
counted iteration (kv) or run (served loads) the engine times a fixed CPU-bound loop
for a few milliseconds on the measuring thread. A case then carries the loop's rate
beside its own figures: how much the machine's speed varied (coefficient of
variation), how closely the case's throughput followed it (Pearson's r), and how
many runs a 95% interval as narrow as the target would need at that spread.

The loop is pure Python on purpose: it needs no memory bandwidth, no system call and
no lock, so its rate changes only when the CPU it runs on gets slower or is taken
away. It runs outside every timed window.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

SAMPLE_S = 0.005          # one reading: 5 ms of the loop (1-2% of a served run's second)
_BLOCK = 2_000            # loop turns between clock reads
_T95 = 1.96               # the normal quantile: the estimate below is a rough one anyway


def loop_rate(seconds: float = SAMPLE_S) -> float:
    """Blocks of the fixed loop per second, over about `seconds` of this thread's time."""
    blocks = 0
    began = time.perf_counter()
    while True:
        for _ in range(_BLOCK):
            pass
        blocks += 1
        elapsed = time.perf_counter() - began
        if elapsed >= seconds:
            return blocks / elapsed


#: fewer paired readings than this give no correlation worth printing (of three, any r
#: from -1 to +1 comes out of noise alone: a large batch size's fixed 3 repetitions)
MIN_PAIRS_FOR_R = 5


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < MIN_PAIRS_FOR_R or len(xs) != len(ys):
        return None
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # a constant series has no correlation
        return None


@dataclass
class SpeedTrace:
    """The loop's rate after each counted iteration or run of one case."""

    rates: list[float] = field(default_factory=list)

    def sample(self) -> None:
        self.rates.append(loop_rate())

    def record(self, throughputs: list[float], target_pct: float) -> dict[str, Any] | None:
        """What the results keep: the spread, its tie to the case's own runs, and the
        runs a `target_pct` interval would need at that spread. `throughputs` are the
        case's per-run rates, in the order the samples were taken (the trailing ones are
        matched when the stop rule counted fewer runs than were sampled)."""
        if len(self.rates) < 2:
            return None
        rates = self.rates[-len(throughputs):] if throughputs else self.rates
        mean = statistics.fmean(rates)
        cv_pct = statistics.stdev(rates) / mean * 100 if mean > 0 else 0.0
        r = _pearson(rates, throughputs[-len(rates):]) if throughputs else None
        return {"samples": len(rates), "sample_ms": SAMPLE_S * 1000,
                "cv_pct": round(cv_pct, 2),
                "min_over_max": round(min(rates) / max(rates), 3) if max(rates) > 0 else None,
                "r_with_throughput": None if r is None else round(r, 3),
                "runs_for_target": runs_for_target(cv_pct, target_pct)}


def runs_for_target(cv_pct: float, target_pct: float) -> int:
    """Runs a mean needs for its 95% interval to be within +-target at this spread, if the
    runs varied as the machine did: n = (1.96 * cv / target)^2."""
    if target_pct <= 0:
        return 0
    return max(2, math.ceil((_T95 * cv_pct / target_pct) ** 2))


def unsteady_note(records: list[dict[str, Any]]) -> str | None:
    """One line for a report whose cases came out UNSTABLE: whether the machine's own
    speed, measured beside them, explains it."""
    traces = [r["machine_speed"] for r in records
              if r.get("unstable") and isinstance(r.get("machine_speed"), dict)]
    if not traces:
        return None
    cvs = sorted(t["cv_pct"] for t in traces)
    rs = sorted(t["r_with_throughput"] for t in traces if t.get("r_with_throughput") is not None
                and t.get("samples", 0) >= MIN_PAIRS_FOR_R)
    needed = max(t["runs_for_target"] for t in traces)
    tied = f"; the runs' throughput followed it (r {rs[0]:+.2f} to {rs[-1]:+.2f})" if rs else ""
    return (f"machine speed: during the {len(traces)} UNSTABLE case(s) a fixed CPU loop "
            f"timed after each run varied by {_span(cvs)}% (coefficient of variation){tied}; "
            f"at that spread a mean needs up to {needed:,} runs for the target interval "
            "(docs/machine-speed.md)")


def unstable_lines(records: list[dict[str, Any]], why: str) -> list[str]:
    """A report's lines on its UNSTABLE cases, none when there are none: how many and
    `why` (the workload's own stop rule and its options), then the machine's speed
    beside them (`unsteady_note`)."""
    count = sum(1 for r in records if r.get("unstable"))
    if not count:
        return []
    speed = unsteady_note(records)
    return [f"! {count} case(s) UNSTABLE: {why}", *([speed] if speed else [])]


def _span(values: list[float]) -> str:
    return f"{values[0]:.1f}" if values[0] == values[-1] else f"{values[0]:.1f}-{values[-1]:.1f}"
