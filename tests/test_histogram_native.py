"""The native histogram (`dbstand._loadgen.Histogram`, behind `LatencyHistogram`)
gives the numbers the pure-Python `hdrh` package gives for the same samples,
merges exactly, and reads and writes HdrHistogram's V2 compressed base64, so
results written before it still read and its output reads in `hdrh`."""

from __future__ import annotations

import pickle
import random
import time

import pytest
from hdrh.histogram import HdrHistogram

from dbstand import _loadgen
from dbstand.engine.histogram import (
    HIGHEST_NS,
    LOWEST_NS,
    SIGNIFICANT_DIGITS,
    LatencyHistogram,
)

Histogram = _loadgen.Histogram

PERCENTILES = (0.0, 0.001, 1.0, 25.0, 50.0, 66.6, 90.0, 99.0, 99.9, 99.99, 100.0, 120.0)


def _samples(seed: int, n: int) -> list[int]:
    """Latency-like samples over many orders of magnitude, with clamped extremes."""
    rng = random.Random(seed)
    out = [int(rng.lognormvariate(13, 1.8)) for _ in range(n)]
    out += [0, -5, 1, 2, HIGHEST_NS, HIGHEST_NS * 3]
    return out


def _hdrh_of(values: list[int]) -> HdrHistogram:
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for v in values:
        h.record_value(min(max(v, LOWEST_NS), HIGHEST_NS))
    return h


def _assert_same(native: _loadgen.Histogram | LatencyHistogram, ref: HdrHistogram) -> None:
    assert native.count == ref.get_total_count()
    for p in PERCENTILES:
        assert native.percentile(p) == ref.get_value_at_percentile(p), p
    # Exact equality, not approximate: the same sums in the same order.
    assert native.mean() == ref.get_mean_value()
    assert native.stddev() == ref.get_stddev()
    assert native.min() == ref.get_min_value()
    assert native.max() == ref.get_max_value()


@pytest.mark.parametrize(("seed", "n"), [(1, 20_000), (2, 1), (3, 997)])
def test_summaries_equal_pure_python_hdrh(seed: int, n: int) -> None:
    values = _samples(seed, n)
    native = Histogram()
    native.record_many(values)
    _assert_same(native, _hdrh_of(values))
    latency = LatencyHistogram()
    latency.record_many(values)
    _assert_same(latency, _hdrh_of(values))


def test_empty_histogram_summaries_equal_hdrh() -> None:
    _assert_same(Histogram(), _hdrh_of([]))
    assert LatencyHistogram().summary_us() is None


def test_merge_equals_recording_all_samples() -> None:
    a_values, b_values = _samples(4, 5_000), _samples(5, 3_000)
    a, b, both = LatencyHistogram(), LatencyHistogram(), LatencyHistogram()
    a.record_many(a_values)
    b.record_many(b_values)
    both.record_many(a_values + b_values)
    a.merge(b)
    assert a.encode() == both.encode()
    assert a.summary_us() == both.summary_us()
    _assert_same(a, _hdrh_of(a_values + b_values))


def test_encoded_histogram_decodes_in_pure_python_hdrh() -> None:
    values = _samples(6, 10_000)
    latency = LatencyHistogram()
    latency.record_many(values)
    decoded = HdrHistogram.decode(latency.encode().encode("ascii"))
    _assert_same(latency, decoded)
    ref = _hdrh_of(values)
    for index in range(ref.counts_len):
        assert decoded.get_count_at_index(index) == ref.get_count_at_index(index)


def test_histograms_written_by_hdrh_still_read() -> None:
    values = _samples(7, 8_000)
    ref = _hdrh_of(values)
    old_file_text = ref.encode().decode("ascii")
    latency = LatencyHistogram.decode(old_file_text)
    _assert_same(latency, ref)
    assert Histogram.decode(old_file_text.encode("ascii")).count == len(values)
    # Merging an old record into a new one is exact too.
    fresh = LatencyHistogram()
    fresh.record_many(values)
    fresh.merge(latency)
    _assert_same(fresh, _hdrh_of(values + values))


def test_summary_us_matches_hdrh() -> None:
    values = _samples(8, 20_000)
    latency = LatencyHistogram()
    latency.record_many(values)
    ref = _hdrh_of(values)
    summary = latency.summary_us()
    assert summary is not None
    assert summary["p50"] == round(ref.get_value_at_percentile(50) / 1000, 3)
    assert summary["p999"] == round(ref.get_value_at_percentile(99.9) / 1000, 3)
    assert summary["max"] == round(ref.get_max_value() / 1000, 3)
    assert summary["mean"] == round(ref.get_mean_value() / 1000, 3)


def test_compatibility_views_and_pickling() -> None:
    values = _samples(9, 2_000)
    latency = LatencyHistogram()
    latency.record_many(values)
    # `.hist` still gives an hdrh histogram for code written against hdrh.
    _assert_same(latency, latency.hist)
    # An hdrh histogram is still accepted by the constructor.
    _assert_same(LatencyHistogram(_hdrh_of(values)), _hdrh_of(values))
    back = pickle.loads(pickle.dumps(latency))
    assert back.encode() == latency.encode()
    native = Histogram()
    native.record_many(values)
    assert pickle.loads(pickle.dumps(native)) == native
    single = LatencyHistogram()
    single.record(1500)
    assert single.count == 1 and single.percentile(50) == 1500


def test_native_summaries_are_fast() -> None:
    """The reason for the native histogram: hdrh takes hundreds of ms here."""
    values = _samples(10, 20_000)
    latency = LatencyHistogram()
    start = time.perf_counter()
    latency.record_many(values)
    latency.mean()
    latency.stddev()
    latency.percentiles([50, 90, 99, 99.9])
    assert time.perf_counter() - start < 0.1


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match=r"base64|HdrHistogram"):
        Histogram.decode("not a histogram")
    with pytest.raises(TypeError):
        Histogram.decode(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Histogram().record_many(["1"])  # type: ignore[list-item]
