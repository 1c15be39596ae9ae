"""Time series of HTTP runs (per-interval successes, failures, latency) against real
servers on loopback: nginx, and the Python test server with a planted stall. The
intervals must add up to the run's totals, their histograms to the case's, bucket for
bucket; a stall must show as intervals without an answer; `--interval 0` keeps none;
repeats give one run each; shards (cluster workers) merge by interval index."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from dbstand.engine.histogram import LatencyHistogram
from dbstand.loadgen import run_closed
from dbstand.loadgen.series import Interval, Series, series_record

from .conftest import Nginx, TestServer

INTERVAL_KEYS = {"t_s", "dur_s", "phase", "ops", "errors", "ops_per_s", "latency_us",
                 "latency_hdr"}


def buckets(hist: LatencyHistogram) -> dict[int, int]:
    """Count per HDR bucket (the bucket's highest equivalent value)."""
    return {item.value_iterated_to: item.count_at_value_iterated_to
            for item in hist.hist.get_recorded_iterator()}


def merged_hdr(intervals: list[dict[str, Any]]) -> LatencyHistogram:
    total = LatencyHistogram()
    for i in intervals:
        if i["latency_hdr"]:
            total.merge(LatencyHistogram.decode(i["latency_hdr"]))
    return total


def case_of(path: Path) -> dict[str, Any]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return next(r for r in records if r["type"] == "case")


def test_http_records_its_series(cli: Any, nginx: Nginx, tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    res = cli("http", nginx.url(), "-c", "4", "-d", "1.1", "--interval", "0.25", "-o",
              str(out))
    assert res.code == 0, res.stderr
    case = case_of(out)
    series = case["series"]
    assert series["interval_s"] == 0.25 and series["clock"] == "run"
    assert len(series["runs"]) == 1
    run = series["runs"][0]
    # every interval up to the end; a sliver of a last one (< 1/10) joins the one before
    whole_intervals = math.ceil(case["http"]["elapsed_s"] / 0.25 - 1e-9)
    assert len(run) in (whole_intervals, whole_intervals - 1)
    for k, i in enumerate(run):
        assert set(i) == INTERVAL_KEYS
        assert i["t_s"] == pytest.approx(0.25 * k)
        assert i["phase"] == "measured"
        assert i["ops"] > 0 and i["errors"] == 0
        assert i["ops_per_s"] == pytest.approx(i["ops"] / i["dur_s"], rel=1e-3)
        assert set(i["latency_us"]) == {"mean", "p50", "p90", "p99", "max"}
        assert i["latency_us"]["p50"] <= i["latency_us"]["p99"] <= i["latency_us"]["max"]
    assert all(i["dur_s"] == pytest.approx(0.25) for i in run[:-1])
    assert 0.025 <= run[-1]["dur_s"] <= 0.275
    assert sum(i["ops"] for i in run) == case["http"]["successes"] == case["http"]["requests"]
    # the intervals' histograms are the case's, split by time: bucket for bucket
    whole = LatencyHistogram.decode(case["latency_hdr"])
    assert buckets(merged_hdr(run)) == buckets(whole)
    assert "interval_s" not in case["params"]  # results of older runs still match


def test_interval_zero_keeps_no_series(cli: Any, nginx: Nginx, tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    res = cli("http", nginx.url(), "-n", "200", "--interval", "0", "-o", str(out))
    assert res.code == 0, res.stderr
    case = case_of(out)
    assert "series" not in case and case["http"]["successes"] == 200
    assert run_closed(nginx.url(), 1, requests=10, interval_s=0).series is None


def test_interval_refused_when_meaningless(cli: Any, tmp_path: Path) -> None:
    for bad in ("-1", "0.0001", "nan"):
        res = cli("http", "http://127.0.0.1:9/", "-n", "1", "--interval", bad, "-o",
                  str(tmp_path / f"h{bad}.jsonl"))
        assert res.code == 2 and "--interval" in res.stderr, (bad, res.stderr)


@pytest.mark.parametrize("open_loop", [False, True], ids=["closed", "open"])
def test_a_stall_shows(cli: Any, test_server: TestServer, tmp_path: Path,
                       open_loop: bool) -> None:
    """The server answers nothing for 0.8 s in the middle of a 2 s run: the intervals
    of the stall have no answer, those around it have; in the open loop the answers
    held by the stall come back with their waiting time in their latency."""
    out = tmp_path / "h.jsonl"
    test_server.stall(ms=800, after_ms=500)
    args = ["-R", "200"] if open_loop else ["-c", "4"]
    res = cli("http", test_server.url(), *args, "-d", "2", "--interval", "0.2", "-o",
              str(out))
    assert res.code == 0, res.stderr
    case = case_of(out)
    run = case["series"]["runs"][0]
    ops = [i["ops"] for i in run]
    assert sum(ops) == case["http"]["successes"]
    idle = [k for k, n in enumerate(ops) if n == 0]
    assert len(idle) >= 2, ops  # 0.8 s holds at least three whole 0.2 s intervals
    assert idle[0] > 0 and idle[-1] < len(ops) - 1, ops
    assert all(run[k]["latency_us"] is None and run[k]["latency_hdr"] is None for k in idle)
    assert ops[idle[-1] + 1] > 0, ops
    if open_loop:  # corrected latency: what waited for the stall shows it
        assert run[idle[-1] + 1]["latency_us"]["max"] > 300_000, run[idle[-1] + 1]


def test_served_measure_records_one_run_per_repeat(nginx: Nginx) -> None:
    from dbstand.workloads.http_load import SEED, LoadPlan, measure

    pid = int((nginx.prefix / "nginx.pid").read_text())
    plan = LoadPlan(connections=2, duration_s=0.5, repeats=2, interval_s=0.2, load=SEED)
    metrics = measure(nginx.url(), plan, pid)
    series = metrics["series"]
    assert series["interval_s"] == 0.2 and len(series["runs"]) == 2
    assert sum(i["ops"] for r in series["runs"] for i in r) == metrics["successes"]
    assert all(len(r) == 3 for r in series["runs"])  # 0.5 s: 0.2 + 0.2 + 0.1
    whole = LatencyHistogram.decode(metrics["latency_hdr"])
    assert buckets(merged_hdr([i for r in series["runs"] for i in r])) == buckets(whole)
    off = measure(nginx.url(), LoadPlan(connections=1, requests=20, repeats=2,
                                        interval_s=0, load=SEED), pid)
    assert "series" not in off


def test_shards_merge_by_interval_index() -> None:
    """Two shards of one run (as cluster workers send them): counts add, latencies merge
    into exactly the histogram of all samples, each interval as wide as its widest."""
    def hist(values: list[int]) -> str | None:
        h = LatencyHistogram()
        h.record_many(values)
        return h.encode() if values else None

    a_values = [[1_000, 2_000, 3_500], [], [70_000, 5_000_000]]
    b_values = [[1_500, 2_000], [9_999], [123_456], [42]]
    a = Series(0.5, tuple(Interval(0.5 * k, 0.5 if k < 2 else 0.3, len(v), 1, hist(v))
                          for k, v in enumerate(a_values)), started_at=100.0)
    b = Series(0.5, tuple(Interval(0.5 * k, 0.5 if k < 3 else 0.1, len(v), 0, hist(v))
                          for k, v in enumerate(b_values)), started_at=100.01)
    m = Series.merge([a, b])
    assert [i.ops for i in m.intervals] == [5, 1, 3, 1]
    assert [i.errors for i in m.intervals] == [1, 1, 1, 0]
    assert [i.dur_s for i in m.intervals] == [0.5, 0.5, 0.5, 0.1]
    assert m.started_at == 100.0
    for k, interval in enumerate(m.intervals):
        values = (a_values[k] if k < len(a_values) else []) + b_values[k]
        expected = LatencyHistogram()
        expected.record_many(values)
        assert interval.histogram is not None
        assert buckets(LatencyHistogram.decode(interval.histogram)) == buckets(expected)
    rec = series_record([m])
    assert rec is not None and rec["runs"][0][1]["latency_us"]["max"] == pytest.approx(
        9.999, rel=1e-3)
    assert series_record([m, None]) is None
    with pytest.raises(ValueError, match="different intervals"):
        Series.merge([a, Series(1.0, ())])


@pytest.mark.timeout(180)
def test_cluster_series_is_the_sum_of_the_workers(cli: Any, nginx: Nginx,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    res = cli("http", nginx.url(), "-c", "4", "-d", "1", "--interval", "0.25", "--cluster",
              "local:2", "-o", str(out))
    assert res.code == 0, res.stderr
    case = case_of(out)
    run = case["series"]["runs"][0]
    workers = case["cluster"]["per_worker"]
    assert len(workers) == 2
    assert sum(i["ops"] for i in run) == case["http"]["successes"] == \
        sum(w["successes"] for w in workers)
    assert buckets(merged_hdr(run)) == buckets(LatencyHistogram.decode(case["latency_hdr"]))
    assert all(i["ops"] > 0 for i in run[:-1])


def test_scenario_failed_checks_count_as_errors(test_server: TestServer) -> None:
    """A 2xx answer whose check fails is a failure in its interval, as in the totals."""
    from dbstand.loadgen import Scenario, Step, run_scenario

    broken = Scenario(steps=[
        Step(name="issue", method="POST", path="/ticket", captures={"ticket": "info.ticket"}),
        Step(name="use-wrong", path="/use?ticket=nope{{ticket}}", expect={"status": "success"}),
    ])
    r = run_scenario(test_server.url("/"), broken, users=2, iterations=40, interval_s=0.05)
    assert r.series is not None and r.check_failed == 40
    assert r.series.ops == r.successes == 40
    assert r.series.errors == r.failed == 40
    hist = LatencyHistogram()
    for i in r.series.intervals:
        if i.histogram:
            hist.merge(LatencyHistogram.decode(i.histogram))
    assert buckets(hist) == buckets(r.latency())


def test_a_sliver_of_a_last_interval_joins_the_one_before() -> None:
    """A run bound by duration ends with a sliver holding the answers in flight at the
    deadline: recorded on its own its rate would be a spike, so it joins the interval
    before (counts added, histograms merged); a last interval of a tenth or more stays."""
    def hist(values: list[int]) -> str:
        h = LatencyHistogram()
        h.record_many(values)
        return h.encode()

    sliver = Series(1.0, (Interval(0.0, 1.0, 900, 0, hist([1_000] * 900)),
                          Interval(1.0, 1.0, 1000, 1, hist([2_000] * 1000)),
                          Interval(2.0, 0.0004, 4, 0, hist([3_000] * 4))))
    rec = sliver.record()
    assert [i["ops"] for i in rec] == [900, 1004]
    assert rec[-1]["dur_s"] == pytest.approx(1.0004)
    assert rec[-1]["errors"] == 1
    assert rec[-1]["ops_per_s"] == pytest.approx(1004 / 1.0004, rel=1e-3)
    assert LatencyHistogram.decode(rec[-1]["latency_hdr"]).count == 1004
    kept = Series(1.0, (*sliver.intervals[:2], Interval(2.0, 0.2, 150, 0, hist([3_000]))))
    assert [i["ops"] for i in kept.record()] == [900, 1000, 150]
