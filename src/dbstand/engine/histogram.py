"""Latency histograms: HDR (HdrHistogram) in nanoseconds, mergeable and exportable.

Recording and summaries are native (`dbstand._loadgen.Histogram`, the Rust
engine's histogram): the pure-Python `hdrh` package takes hundreds of ms for the
mean or standard deviation of a run, the native one well under a millisecond.
The numbers are the ones `hdrh` gives for the same counts, and the encoding is
HdrHistogram's V2 compressed base64, so files written before read as they did.
Without the native extension (a source tree nobody built) `hdrh` does the work.

Values are recorded after an iteration, never inside the timed loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hdrh.histogram import HdrHistogram

LOWEST_NS = 1
HIGHEST_NS = 3_600_000_000_000  # one hour
SIGNIFICANT_DIGITS = 3

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


class _Backend(Protocol):
    """What LatencyHistogram needs from a histogram (native or `hdrh`-based)."""

    @property
    def count(self) -> int: ...
    def record(self, value: int) -> None: ...
    def record_many(self, values: Iterable[int]) -> None: ...
    def merge(self, other: Any) -> None: ...
    def percentile(self, percentile: float) -> int: ...
    def percentiles(self, percentiles: list[float]) -> list[int]: ...
    def mean(self) -> float: ...
    def stddev(self) -> float: ...
    def min(self) -> int: ...
    def max(self) -> int: ...
    def encode(self) -> str: ...


class _HdrhBackend:
    """The same interface on the pure-Python `hdrh` package (fallback only)."""

    def __init__(self, hist: HdrHistogram | None = None) -> None:
        from hdrh.histogram import HdrHistogram

        self.h = hist or HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)

    @property
    def count(self) -> int:
        return self.h.get_total_count()

    def record(self, value: int) -> None:
        self.h.record_value(min(max(value, LOWEST_NS), HIGHEST_NS))

    def record_many(self, values: Iterable[int]) -> None:
        record = self.h.record_value
        for value in values:
            record(min(max(value, LOWEST_NS), HIGHEST_NS))

    def merge(self, other: _HdrhBackend) -> None:
        self.h.add(other.h)

    def percentile(self, percentile: float) -> int:
        return self.h.get_value_at_percentile(percentile)

    def percentiles(self, percentiles: list[float]) -> list[int]:
        return [self.h.get_value_at_percentile(p) for p in percentiles]

    def mean(self) -> float:
        return self.h.get_mean_value()

    def stddev(self) -> float:
        return self.h.get_stddev()

    def min(self) -> int:
        return self.h.get_min_value()

    def max(self) -> int:
        return self.h.get_max_value()

    def encode(self) -> str:
        return self.h.encode().decode("ascii")

    @staticmethod
    def decode(text: str) -> _HdrhBackend:
        from hdrh.histogram import HdrHistogram

        return _HdrhBackend(HdrHistogram.decode(text.encode("ascii")))


try:
    from dbstand._loadgen import Histogram as _Native
except ImportError:  # pragma: no cover - only in an unbuilt source tree
    _Native = None


def _new_backend() -> _Backend:
    if _Native is not None:
        return _Native(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    return _HdrhBackend()


def _decode_backend(text: str) -> _Backend:
    if _Native is not None:
        return _Native.decode(text)
    return _HdrhBackend.decode(text)


class LatencyHistogram:
    """An HDR histogram of per-operation latencies in ns."""

    def __init__(self, hist: Any = None):
        """`hist`: nothing (an empty histogram), a native `dbstand._loadgen.Histogram`,
        or an `hdrh` HdrHistogram (its counts are taken over)."""
        if hist is None:
            self._h: _Backend = _new_backend()
        elif isinstance(hist, _HdrhBackend) or (_Native is not None and isinstance(hist, _Native)):
            self._h = hist
        else:  # an hdrh HdrHistogram from older callers
            self._h = _decode_backend(hist.encode().decode("ascii"))

    def record(self, value_ns: int) -> None:
        self._h.record(value_ns)

    def record_many(self, values_ns: Iterable[int]) -> None:
        """Record values (clamped to 1 ns .. 1 h, never dropped)."""
        self._h.record_many(values_ns)

    def merge(self, other: LatencyHistogram) -> None:
        """Exact merge (counts add up), never an average of percentiles."""
        self._h.merge(other._h)

    @property
    def count(self) -> int:
        return self._h.count

    def percentile(self, percentile: float) -> int:
        """Value (ns) at `percentile` in 0..100; 0 when empty."""
        return self._h.percentile(percentile)

    def percentiles(self, percentiles: Iterable[float]) -> list[int]:
        return self._h.percentiles(list(percentiles))

    def mean(self) -> float:
        return self._h.mean()

    def stddev(self) -> float:
        return self._h.stddev()

    def min(self) -> int:
        return self._h.min()

    def max(self) -> int:
        return self._h.max()

    def summary_us(self) -> dict[str, float] | None:
        """p50/p90/p99/p99.9/max/mean in microseconds, or None when empty."""
        if self.count == 0:
            return None
        values = self._h.percentiles(list(PERCENTILES.values()))
        out = {k: v / 1000 for k, v in zip(PERCENTILES, values, strict=True)}
        out["max"] = self._h.max() / 1000
        out["mean"] = self._h.mean() / 1000
        return {k: round(v, 3) for k, v in out.items()}

    def encode(self) -> str:
        """HdrHistogram V2 compressed base64: what other HDR tools can decode."""
        return self._h.encode()

    @classmethod
    def decode(cls, text: str) -> LatencyHistogram:
        return cls(_decode_backend(text))

    @property
    def hist(self) -> HdrHistogram:
        """The same counts as an `hdrh` HdrHistogram (a copy, for code written
        against `hdrh`; slow to summarise, prefer the methods above)."""
        if isinstance(self._h, _HdrhBackend):
            return self._h.h
        from hdrh.histogram import HdrHistogram

        return HdrHistogram.decode(self._h.encode().encode("ascii"))

    def __getstate__(self) -> str:
        return self._h.encode()

    def __setstate__(self, state: str) -> None:
        self._h = _decode_backend(state)

    def __repr__(self) -> str:
        return f"LatencyHistogram(count={self.count})"
