"""Latency histograms: HDR (HdrHistogram) in nanoseconds, mergeable and exportable.

Values are recorded after an iteration, never inside the timed loop: the pure-Python
`record_value` costs about 1 us, more than many operations it would measure.
"""

from __future__ import annotations

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

LOWEST_NS = 1
HIGHEST_NS = 3_600_000_000_000  # one hour
SIGNIFICANT_DIGITS = 3

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


class LatencyHistogram:
    """An HDR histogram of per-operation latencies in ns."""

    def __init__(self, hist: HdrHistogram | None = None):
        self.hist = hist or HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)

    def record_many(self, values_ns: Iterable[int]) -> None:
        record = self.hist.record_value
        for value in values_ns:
            record(min(max(value, LOWEST_NS), HIGHEST_NS))

    def merge(self, other: LatencyHistogram) -> None:
        """Exact merge (counts add up), never an average of percentiles."""
        self.hist.add(other.hist)

    @property
    def count(self) -> int:
        return self.hist.get_total_count()

    def summary_us(self) -> dict[str, float] | None:
        """p50/p90/p99/p99.9/max/mean in microseconds, or None when empty."""
        if self.count == 0:
            return None
        out = {k: self.hist.get_value_at_percentile(p) / 1000 for k, p in PERCENTILES.items()}
        out["max"] = self.hist.get_max_value() / 1000
        out["mean"] = self.hist.get_mean_value() / 1000
        return {k: round(v, 3) for k, v in out.items()}

    def encode(self) -> str:
        """HdrHistogram V2 compressed base64: what other HDR tools can decode."""
        return self.hist.encode().decode("ascii")

    @classmethod
    def decode(cls, text: str) -> LatencyHistogram:
        return cls(HdrHistogram.decode(text.encode("ascii")))
