"""Per-interval time series of an HTTP run, as the native engine measures it.

The engine counts, in fixed-width intervals from the run's start (the moment its
threads started sending), the successful answers (2xx that passed every check), the
failed requests (other answers, failed checks, socket errors, timeouts) and the
latencies of the answers completed there (an HDR histogram each, the values the
run's main histogram records: corrected ones in an open loop). Intervals with
nothing in them are kept, so a stall shows as a gap rather than vanishing into the
run's mean. Shards of one run (cluster workers started at one moment) merge by
interval index: counts add up, histograms merge exactly, percentiles are computed
again from the merged histogram.

`series_record` gives the results record's `series` field (docs/results-schema.md):
one list of intervals per run (repeat) of the case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.series import latency_fields


def per_second(count: float, seconds: float) -> float:
    """`count` per second over `seconds`; 0.0 for a span of no time (an empty run or
    interval has no rate, and is no division error)."""
    return count / seconds if seconds > 0 else 0.0


#: the engine's default interval width (s); 0 keeps no series
DEFAULT_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Interval:
    """One interval of a run."""

    t_s: float
    """Start, in seconds from the run's start."""
    dur_s: float
    """Width; the last interval of a run may be shorter."""
    ops: int
    """Successful answers completed in the interval."""
    errors: int
    """Failed requests completed (or given up) in the interval."""
    histogram: str | None
    """Latencies (ns) of the answers completed in the interval, HdrHistogram V2
    compressed base64; None when there were none."""

    @property
    def ops_per_s(self) -> float:
        return per_second(self.ops, self.dur_s)

    def record(self, phase: str = "measured") -> dict[str, Any]:
        """The interval as the record stores it (docs/results-schema.md)."""
        latency_us, latency_hdr = (latency_fields(LatencyHistogram.decode(self.histogram))
                                   if self.histogram else (None, None))
        return {"t_s": round(self.t_s, 6), "dur_s": round(self.dur_s, 6), "phase": phase,
                "ops": self.ops, "errors": self.errors,
                "ops_per_s": round(self.ops_per_s, 1),
                "latency_us": latency_us, "latency_hdr": latency_hdr}


@dataclass(frozen=True)
class Series:
    """A run's intervals, in order, every one of them up to the run's end."""

    interval_s: float
    intervals: tuple[Interval, ...]
    started_at: float | None = None
    """Unix time of the run's start (the intervals' origin), when known."""

    @classmethod
    def from_native(cls, d: Mapping[str, Any] | None,
                    started_at: float | None = None) -> Series | None:
        """From the engine's `series` dict (None when the run kept none)."""
        if not d:
            return None
        return cls(
            interval_s=float(d["interval_s"]),
            intervals=tuple(Interval(t_s=float(i["t_s"]), dur_s=float(i["dur_s"]),
                                     ops=int(i["ops"]), errors=int(i["errors"]),
                                     histogram=i.get("histogram") or None)
                            for i in d["intervals"]),
            started_at=started_at if started_at is not None else d.get("started_at"),
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Series | None:
        """Inverse of `dataclasses.asdict` (a result sent from another process)."""
        return cls.from_native(d)

    @property
    def ops(self) -> int:
        return sum(i.ops for i in self.intervals)

    @property
    def errors(self) -> int:
        return sum(i.errors for i in self.intervals)

    def record(self, phase: str = "measured") -> list[dict[str, Any]]:
        """This run's list of intervals in the record, a sliver of a last interval
        folded into the one before (see `folded_tail`)."""
        return [i.record(phase) for i in self.folded_tail().intervals]

    def folded_tail(self) -> Series:
        """The series with a last interval shorter than a tenth of the width merged
        into the one before. A run bound by duration ends with a sliver (often under a
        millisecond) holding the answers in flight at the deadline: as an interval of
        its own its rate would be a spike that never happened."""
        if len(self.intervals) < 2 or self.intervals[-1].dur_s >= self.interval_s / 10:
            return self
        *head, before, last = self.intervals
        hist = LatencyHistogram()
        for i in (before, last):
            if i.histogram:
                hist.merge(LatencyHistogram.decode(i.histogram))
        joined = Interval(t_s=before.t_s, dur_s=before.dur_s + last.dur_s,
                          ops=before.ops + last.ops, errors=before.errors + last.errors,
                          histogram=hist.encode() if hist.count else None)
        return Series(self.interval_s, (*head, joined), self.started_at)

    @classmethod
    def merge(cls, parts: Iterable[Series]) -> Series:
        """Shards of one run that started together, merged interval by interval:
        counts added, histograms merged exactly; each interval as wide as the widest
        shard has it (a shard that ended earlier has a shorter last one)."""
        shards = list(parts)
        if not shards:
            raise ValueError("nothing to merge")
        width = shards[0].interval_s
        if any(abs(s.interval_s - width) > 1e-9 for s in shards):
            raise ValueError("series with different intervals do not merge: "
                             + ", ".join(f"{s.interval_s:g} s" for s in shards))
        n = max(len(s.intervals) for s in shards)
        merged = []
        for index in range(n):
            here = [s.intervals[index] for s in shards if index < len(s.intervals)]
            hist = LatencyHistogram()
            for i in here:
                if i.histogram:
                    hist.merge(LatencyHistogram.decode(i.histogram))
            merged.append(Interval(
                t_s=index * width, dur_s=max(i.dur_s for i in here),
                ops=sum(i.ops for i in here), errors=sum(i.errors for i in here),
                histogram=hist.encode() if hist.count else None))
        starts = [s.started_at for s in shards if s.started_at is not None]
        return cls(width, tuple(merged), min(starts) if starts else None)


def series_record(runs: Sequence[Series | None]) -> dict[str, Any] | None:
    """The record's `series` field for a case measured as `runs` (one per repeat, in
    order); None when any run kept no series (`--interval 0`). The engine has no
    warm-up phase inside a run (a served workload's warm-up is a separate, unrecorded
    run), so every interval is `measured`."""
    if not runs or any(r is None for r in runs):
        return None
    kept = [r for r in runs if r is not None]
    out: dict[str, Any] = {"interval_s": kept[0].interval_s, "clock": "run",
                           "runs": [r.record() for r in kept]}
    if all(r.started_at is not None for r in kept):
        out["started_at"] = [round(r.started_at or 0.0, 6) for r in kept]
    return out
