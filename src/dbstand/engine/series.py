"""Per-interval time series of one in-process case, so warm-up, stalls and drift show.

The engine runs iterations of `revs` operations; this module turns each finished
iteration (its timed window, its operations, its sampled latencies) into fixed-width
wall-clock intervals counted from the case's first timed operation (warm-up
included). It works at iteration granularity, after the timed window, so the timed
loops pay nothing for it:

- operations: an iteration spanning interval boundaries gives each interval the share
  of its operations that the overlap is of its window (cumulative rounding, so the
  intervals' integers add up to exactly the operations run);
- `busy_s`: the part of the interval inside iterations' timed windows; `ops_per_s` is
  per wall second of the interval (pauses, preparation and restoring between
  iterations lower it), `ops / busy_s` is the rate while operations ran;
- latency: an iteration's sampled latencies go to the interval holding its end, in a
  native HDR histogram that is summarised and encoded as soon as a later interval
  starts (ends only move forward), so one histogram is alive at a time;
- phase: the interval in which the first measured iteration starts is cut in two
  there (a shorter `warmup` interval, then a shorter `measured` one), so every interval
  is of one phase and the measured intervals' histograms add up to exactly the case's
  `latency_hdr`.

An interval with no operation still appears, so a stall is visible. The record is the
`series` field of docs/results-schema.md (one run per in-process case).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import clock

#: the latency figures each interval keeps (µs), as in the agreed record format
INTERVAL_PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0}


@dataclass
class _Interval:
    ops: int = 0
    busy_ns: int = 0
    latency_us: dict[str, float] | None = None
    latency_hdr: str | None = None


def latency_fields(hist: LatencyHistogram) -> tuple[dict[str, float] | None, str | None]:
    """An interval's `latency_us` (mean, p50, p90, p99, max) and `latency_hdr`."""
    if hist.count == 0:
        return None, None
    values = hist.percentiles(INTERVAL_PERCENTILES.values())
    out = {"mean": hist.mean() / 1000}
    out.update({k: v / 1000 for k, v in zip(INTERVAL_PERCENTILES, values, strict=True)})
    out["max"] = hist.max() / 1000
    return {k: round(v, 3) for k, v in out.items()}, hist.encode()


Key = tuple[int, int]   # (grid cell, 0 before the cut / 1 from it)


@dataclass
class IntervalSeries:
    """Buckets iterations of one case by wall time; `record()` is the `series` field."""

    interval_s: float
    _width_ns: int = 0
    _origin_ns: int | None = None
    _origin_unix: float = 0.0
    _end_ns: int = 0
    _cut_ns: int | None = None                # where the measured phase began
    _intervals: dict[Key, _Interval] = field(default_factory=dict)
    _open: LatencyHistogram | None = None     # latencies of the interval `_open_key`
    _open_key: Key | None = None

    def __post_init__(self) -> None:
        if self.interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._width_ns = max(1, round(self.interval_s * 1e9))

    def _split(self, cell: int) -> bool:
        cut = self._cut_ns
        return cut is not None and cell * self._width_ns < cut < (cell + 1) * self._width_ns

    def _bounds(self, key: Key) -> tuple[int, int]:
        cell, part = key
        lo, hi = cell * self._width_ns, (cell + 1) * self._width_ns
        if self._split(cell):
            assert self._cut_ns is not None
            return (lo, self._cut_ns) if part == 0 else (self._cut_ns, hi)
        return lo, hi

    def _key(self, at: int) -> Key:
        cell = at // self._width_ns
        return cell, int(self._split(cell) and at >= (self._cut_ns or 0))

    def _close_latency(self) -> None:
        if self._open is not None and self._open_key is not None:
            interval = self._intervals.setdefault(self._open_key, _Interval())
            interval.latency_us, interval.latency_hdr = latency_fields(self._open)
        self._open, self._open_key = None, None

    def add(self, started_ns: int, elapsed_ns: int, ops: int, measured: bool,
            samples: list[int] | None = None,
            histograms: list[LatencyHistogram] | None = None) -> None:
        """One finished iteration: its window began at `started_ns` (engine clock,
        `loops.clock`) and lasted `elapsed_ns`; `samples` (raw ns) and `histograms`
        (from worker processes) are its timed operations. Iterations come in order,
        warm-up ones first."""
        if self._origin_ns is None:
            self._origin_ns = started_ns
            self._origin_unix = time.time() - (clock() - started_ns) / 1e9
        start = max(0, started_ns - self._origin_ns)
        end = start + max(0, elapsed_ns)
        if measured and self._cut_ns is None:
            self._cut_ns = start
        self._end_ns = max(self._end_ns, end)
        width, span, given = self._width_ns, end - start, 0
        for cell in range(start // width, max(start, end - 1) // width + 1):
            for part in (0, 1) if self._split(cell) else (0,):
                lo, hi = self._bounds((cell, part))
                lo, hi = max(start, lo), min(end, hi)
                if hi <= lo and span > 0:
                    continue
                # operations up to `hi`, rounded: the shares add up to exactly `ops`
                upto = ops if hi >= end or span == 0 else round(ops * (hi - start) / span)
                interval = self._intervals.setdefault((cell, part), _Interval())
                interval.ops += upto - given
                interval.busy_ns += max(0, hi - lo)
                given = upto
        if samples or histograms:
            key = self._key(max(start, end - 1))
            if key != self._open_key:
                self._close_latency()
                self._open, self._open_key = LatencyHistogram(), key
            assert self._open is not None
            if samples:
                self._open.record_many(samples)
            for hist in histograms or ():
                self._open.merge(hist)

    def record(self) -> dict[str, Any] | None:
        """The `series` field (docs/results-schema.md); None before any iteration."""
        if self._origin_ns is None:
            return None
        self._close_latency()
        last = self._key(max(0, self._end_ns - 1))
        keys = [(cell, part) for cell in range(last[0] + 1)
                for part in ((0, 1) if self._split(cell) else (0,)) if (cell, part) <= last]
        points = []
        for key in keys:
            interval = self._intervals.get(key) or _Interval()
            lo, hi = self._bounds(key)
            dur_ns = max(1, min(hi, self._end_ns) - lo)
            dur_s = dur_ns / 1e9
            cut = self._cut_ns
            points.append({
                "t_s": round(lo / 1e9, 6), "dur_s": round(dur_s, 6),
                "phase": "warmup" if cut is None or lo < cut else "measured",
                "ops": interval.ops, "errors": 0,
                "ops_per_s": round(interval.ops / dur_s, 1),
                "busy_s": round(min(interval.busy_ns, dur_ns) / 1e9, 6),
                "latency_us": interval.latency_us, "latency_hdr": interval.latency_hdr,
            })
        return {"interval_s": self.interval_s, "clock": "run", "runs": [points],
                "started_at": [round(self._origin_unix, 6)]}
