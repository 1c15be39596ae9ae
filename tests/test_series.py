"""Per-interval time series of in-process cases (engine/series.py): real kv runs on
SQLite through the CLI, and the bucketing itself on known iteration windows."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.series import IntervalSeries

MS = 1_000_000  # ns


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


@pytest.mark.exclusive  # busy time against wall time: a second worker blurs them
def test_kv_run_records_a_series_with_pauses_and_warmup(cli, tmp_path: Path) -> None:
    """--interval 0.2 with a 0.15 s pause: every operation run (warm-up included) is in
    some interval, the first ones are marked warm-up, pauses show as idle time, and
    every timed operation's latency is in an interval."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", f"sqlite:///{tmp_path / 'kv.db'}", "--op",
              "select,update", "--revs", "100", "--rows", "500", "--warmup", "2",
              "--min-iterations", "4", "--max-iterations", "4",
              "--pause", "0.15", "--latency", "all", "--interval", "0.2", "-o", str(out))
    assert res.code == 0, res.stderr
    for rec in cases(out):
        series = rec["series"]
        assert series["interval_s"] == 0.2 and series["clock"] == "run"
        (run,) = series["runs"]
        iterations = rec["warmup_iterations"] + rec["iterations_run"]
        assert iterations >= 6  # a steady warm-up may add iterations
        # every operation run, warm-up included, and nothing else (not the calibration)
        assert sum(p["ops"] for p in run) == iterations * rec["revs"]
        # 6+ iterations with 5+ pauses of 0.15 s between them: at least 0.75 s of intervals
        assert len(run) >= 4 and run[-1]["t_s"] + run[-1]["dur_s"] >= 0.75
        for p, after in itertools.pairwise(run):  # contiguous, in order
            assert after["t_s"] == pytest.approx(p["t_s"] + p["dur_s"], abs=2e-6)
        for p in run:
            assert 0 < p["dur_s"] <= 0.2 + 1e-9
            assert p["busy_s"] <= p["dur_s"] + 1e-9
            assert p["ops_per_s"] == pytest.approx(p["ops"] / p["dur_s"], rel=1e-3, abs=0.1)
            assert (p["latency_us"] is None) == (p["latency_hdr"] is None)
        # all 0.2 s but the last and the two halves of the cell where measuring began
        assert sum(p["dur_s"] != pytest.approx(0.2) for p in run[:-1]) <= 2
        # pauses between iterations: the run was busy for much less than its wall time
        assert sum(p["busy_s"] for p in run) < 0.8 * sum(p["dur_s"] for p in run)
        assert run[0]["phase"] == "warmup" and run[-1]["phase"] == "measured"
        phases = [p["phase"] for p in run]
        assert phases == sorted(phases, key=lambda x: x == "measured")  # warm-up first
        warm = [p for p in run if p["phase"] == "warmup"]
        assert sum(p["ops"] for p in warm) == rec["warmup_iterations"] * rec["revs"]
        # every op timed: warm-up intervals hold the warm-up's samples, the measured
        # ones exactly the case's histogram
        counts = [LatencyHistogram.decode(p["latency_hdr"]).count if p["latency_hdr"] else 0
                  for p in run]
        assert sum(counts) == iterations * rec["revs"]
        measured = LatencyHistogram()
        for p in run:
            if p["phase"] == "measured" and p["latency_hdr"]:
                measured.merge(LatencyHistogram.decode(p["latency_hdr"]))
        assert measured.count == rec["latency_samples"] == rec["iterations_run"] * rec["revs"]
        assert measured.max() == LatencyHistogram.decode(rec["latency_hdr"]).max()
        for p in run:
            if p["latency_us"]:
                lat = p["latency_us"]
                assert set(lat) == {"mean", "p50", "p90", "p99", "max"}
                assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
        assert series["started_at"][0] == pytest.approx(
            rec_start(rec), abs=rec["duration_s"] + 1)


def rec_start(rec: dict) -> float:
    from datetime import datetime

    return datetime.fromisoformat(rec["finished_at"].replace("Z", "+00:00")).timestamp()


def test_interval_zero_records_no_series(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--op", "select", "--revs", "200", "--rows", "300",
              "--min-iterations", "2", "--max-iterations", "2", "--interval", "0",
              "-o", str(out))
    assert res.code == 0, res.stderr
    (rec,) = cases(out)
    assert "series" not in rec and rec["engine"]["interval_s"] == 0


def test_negative_interval_is_refused(cli, tmp_path: Path) -> None:
    res = cli("run", "kv", "--op", "select", "--interval", "-1", "-o",
              str(tmp_path / "r.jsonl"))
    assert res.code == 2 and "--interval cannot be negative" in res.stderr


def test_an_iteration_spanning_boundaries_splits_its_operations() -> None:
    s = IntervalSeries(0.1)
    # warm-up 0-50 ms; measured 50-260 ms (crosses 100 and 200 ms); idle 260-420 ms;
    # measured 420-430 ms: intervals 0..4, the fourth (300-400 ms) a stall with nothing
    s.add(10**12, 50 * MS, 1000, False, [5_000] * 10)
    s.add(10**12 + 50 * MS, 210 * MS, 2100, True, [7_000] * 20)
    s.add(10**12 + 420 * MS, 10 * MS, 100, True, [9_000, 11_000])
    rec = s.record()
    assert rec is not None
    (run,) = rec["runs"]
    # the first cell is cut where the measured phase begins (50 ms): one phase each
    assert [p["t_s"] for p in run] == pytest.approx([0, 0.05, 0.1, 0.2, 0.3, 0.4])
    assert [p["dur_s"] for p in run] == pytest.approx([0.05, 0.05, 0.1, 0.1, 0.1, 0.03])
    assert [p["phase"] for p in run] == ["warmup"] + ["measured"] * 5
    assert [p["ops"] for p in run] == [1000, 500, 1000, 600, 0, 100]
    assert [p["busy_s"] for p in run] == pytest.approx([0.05, 0.05, 0.1, 0.06, 0.0, 0.01])
    assert run[-1]["ops_per_s"] == pytest.approx(100 / 0.03, rel=1e-3)
    # latency: the warm-up's in its interval, the long iteration's where it ended
    lat = [LatencyHistogram.decode(p["latency_hdr"]).count if p["latency_hdr"] else 0
           for p in run]
    assert lat == [10, 0, 0, 20, 0, 2]
    assert run[4]["latency_us"] is None and run[4]["ops_per_s"] == 0
    assert run[5]["latency_us"]["max"] == pytest.approx(11.0, rel=0.01)


def test_a_cut_on_a_boundary_splits_nothing() -> None:
    s = IntervalSeries(0.1)
    s.add(0, 100 * MS, 100, False)
    s.add(100 * MS, 150 * MS, 150, True, [1_000])
    rec = s.record()
    assert rec is not None
    (run,) = rec["runs"]
    assert [(p["t_s"], p["phase"], p["ops"]) for p in run] == [
        (0.0, "warmup", 100), (0.1, "measured", 100), (0.2, "measured", 50)]
    assert run[2]["dur_s"] == pytest.approx(0.05)


def test_rounding_never_loses_an_operation() -> None:
    s = IntervalSeries(0.001)
    start = 5 * 10**9
    for i in range(50):  # odd lengths straddling many boundaries
        s.add(start, 3_333_333 + i * 7_919, 997 + i, i >= 3)
        start += 3_333_333 + i * 7_919 + 123_457
    rec = s.record()
    assert rec is not None
    assert sum(p["ops"] for p in rec["runs"][0]) == sum(997 + i for i in range(50))
    assert all(p["ops"] >= 0 for p in rec["runs"][0])


def test_concurrent_modes_bucket_whole_iterations(cli, tmp_path: Path) -> None:
    """threads and worker processes: the iteration's operations and merged latency (the
    processes' histograms) land in the intervals like a single connection's."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", f"sqlite:///{tmp_path / 'kv.db'}", "--op", "select",
              "--mode", "threads:2,processes:2", "--revs", "400", "--rows", "500",
              "--min-iterations", "3", "--max-iterations", "3", "--interval", "0.05",
              "--latency", "every:4", "-o", str(out))
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert [r["mode"] for r in recs] == ["threads:2", "processes:2"]
    for rec in recs:
        (run,) = rec["series"]["runs"]
        runs = rec["warmup_iterations"] + rec["iterations_run"]
        assert sum(p["ops"] for p in run) == runs * rec["revs"]
        measured = sum(LatencyHistogram.decode(p["latency_hdr"]).count for p in run
                       if p["phase"] == "measured" and p["latency_hdr"])
        assert measured == rec["latency_samples"] > 0


def test_html_merges_long_series_and_folds_many_charts(cli, tmp_path: Path) -> None:
    """A series longer than the chart's point budget is drawn merged (and says so);
    more charts than a screenful start folded; the hover boxes have a page budget."""
    import dataclasses

    from dbstand.report.renderers import html
    from dbstand.results.store import read_results
    from dbstand.workloads.render import build_report

    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--op", "select", "--revs", "3000", "--rows", "500",
              "--min-iterations", "6", "--max-iterations", "6", "--pause", "0.01",
              "--interval", "0.0002", "-o", str(out))
    assert res.code == 0, res.stderr
    (rec,) = cases(out)
    intervals = len(rec["series"]["runs"][0])
    assert intervals > html.SERIES_MAX_POINTS
    report = build_report(read_results(out))
    page = html.render(report)
    k = -(-intervals // html.SERIES_MAX_POINTS)
    assert f"each point merges {k} intervals" in page and "<details>" not in page
    (m,) = report.measurements
    report.measurements = [dataclasses.replace(m, name=f"{m.name} #{i}", anchor="")
                           for i in range(html.SERIES_OPEN + 1)]
    page = html.render(report)
    assert page.count("<figure") == html.SERIES_OPEN + 1
    assert f"<summary>Time series of {html.SERIES_OPEN + 1} cases" in page
    assert 'href="#cases">(table)</a>' in page  # no row to link to: the table
    assert ("Too many intervals for hover boxes" in page) == (
        (html.SERIES_OPEN + 1) * intervals > html.SERIES_TOOLTIPS)
