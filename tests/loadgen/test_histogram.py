"""Results are mergeable: the HDR histogram is the standard V2 compressed
format that the Python `hdrh` package decodes, and results add up exactly."""

from __future__ import annotations

import json

from hdrh.histogram import HdrHistogram

from dbstand import _loadgen
from dbstand.loadgen import LoadResult, run_closed

from .conftest import TestServer


def test_histogram_decodes_with_hdrh_and_merges(test_server: TestServer) -> None:
    a = run_closed(test_server.url(), connections=2, requests=300)
    b = run_closed(test_server.url(), connections=2, requests=200)
    ha = HdrHistogram.decode(a.histogram.encode())
    hb = HdrHistogram.decode(b.histogram.encode())
    assert ha.get_total_count() == 300 and hb.get_total_count() == 200
    assert 10_000 < ha.get_value_at_percentile(50) < 1_000_000_000  # ns: 10 us .. 1 s
    ha.add(hb)
    assert ha.get_total_count() == 500
    native = HdrHistogram.decode(_loadgen.merge_histograms([a.histogram, b.histogram]).encode())
    assert native.get_total_count() == 500
    assert native.get_max_value() == ha.get_max_value()


def test_results_merge_and_round_trip(test_server: TestServer) -> None:
    a = run_closed(test_server.url(), connections=2, requests=100)
    b = run_closed(test_server.url("/status/500"), connections=1, requests=50)
    m = LoadResult.merge([a, b])
    assert m.requests == 150 and m.successes == 100
    assert m.status_counts == {200: 100, 500: 50}
    assert m.latency().count == 150
    assert m.connections == 3
    back = LoadResult.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back == m
