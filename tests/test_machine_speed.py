"""The machine's own speed beside a case (engine/machine_speed.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.engine.machine_speed import SpeedTrace, loop_rate, runs_for_target, unsteady_note


def test_the_loop_rate_is_a_positive_rate_over_about_the_asked_time() -> None:
    assert loop_rate(0.002) > 0


@pytest.mark.parametrize(("cv", "target", "runs"), [
    (0.0, 3.0, 2),        # a steady machine: the least a mean needs
    (3.0, 3.0, 4),        # (1.96 * 1)^2 = 3.84
    (15.0, 3.0, 97),      # (1.96 * 5)^2 = 96.04: the spread seen on a shared 2-core VM
    (15.0, 5.0, 35),      # (1.96 * 3)^2 = 34.57
])
def test_runs_for_target_follows_the_normal_interval(cv: float, target: float,
                                                     runs: int) -> None:
    assert runs_for_target(cv, target) == runs


def test_a_trace_keeps_the_spread_and_its_tie_to_the_runs() -> None:
    trace = SpeedTrace(rates=[100.0, 120.0, 80.0, 100.0, 100.0])
    rec = trace.record([10.0, 12.0, 8.0, 10.0, 10.0], target_pct=3.0)
    assert rec is not None
    assert rec["samples"] == 5 and rec["min_over_max"] == pytest.approx(80 / 120, abs=1e-3)
    assert rec["cv_pct"] == pytest.approx(14.14, abs=0.01)
    assert rec["r_with_throughput"] == pytest.approx(1.0)      # the runs followed the CPU
    assert rec["runs_for_target"] == runs_for_target(rec["cv_pct"], 3.0)
    # runs that moved against the CPU's speed
    assert trace.record([8.0, 7.0, 9.0, 8.0, 8.0], 3.0)["r_with_throughput"] < 0
    # the stop rule counted the trailing runs only: the trailing samples are matched;
    # three pairs give no correlation (any r comes out of three noisy points)
    short = trace.record([12.0, 8.0, 10.0], 3.0)
    assert short["samples"] == 3 and short["r_with_throughput"] is None
    assert SpeedTrace(rates=[1.0]).record([1.0], 3.0) is None  # one reading: no spread


def test_every_counted_iteration_gets_a_reading() -> None:
    cfg = EngineConfig(revs=500, min_iterations=3, max_iterations=5, target_ci_pct=50.0)
    m = run_benchmark(Benchmark("sum", lambda n: sum(range(n)), lambda i: [100] * 500), cfg)
    assert m.machine_speed is not None
    assert m.machine_speed["samples"] == m.summary.n
    assert m.machine_speed["cv_pct"] >= 0 and m.machine_speed["runs_for_target"] >= 2


def test_the_note_speaks_of_unstable_cases_only() -> None:
    steady = {"unstable": False, "machine_speed": {"cv_pct": 1.0, "r_with_throughput": 0.1,
                                                   "runs_for_target": 2}}
    assert unsteady_note([steady]) is None
    wide = [{"unstable": True, "machine_speed": {"cv_pct": cv, "r_with_throughput": r,
                                                 "runs_for_target": n, "samples": 30}}
            for cv, r, n in ((12.0, 0.8, 62), (18.5, 0.9, 146))]
    line = unsteady_note([steady, *wide])
    assert line is not None
    assert "2 UNSTABLE case(s)" in line and "12.0-18.5%" in line
    assert "r +0.80 to +0.90" in line and "146 runs" in line
    # a trace of fewer than five readings (an old record's) gives the note no r
    few = {"unstable": True, "machine_speed": {"cv_pct": 30.0, "r_with_throughput": -1.0,
                                               "runs_for_target": 400, "samples": 3}}
    line = unsteady_note([*wide, few])
    assert line is not None and "r +0.80 to +0.90" in line and "400 runs" in line


def test_the_batch_report_says_what_the_machine_did() -> None:
    """batch's footnotes carry the note under their UNSTABLE count, as kv's, webtech's and
    docquery's reports do (the study page of 2026-11-27 had 77 UNSTABLE cases and no word
    of the machine's own spread)."""
    from dbstand.workloads.batch.report import footnotes

    wide = {"unstable": True, "repetition": "stop rule",
            "machine_speed": {"cv_pct": 25.5, "r_with_throughput": 0.33, "runs_for_target": 279}}
    lines = footnotes([wide])
    at = next(i for i, line in enumerate(lines) if "1 case(s) UNSTABLE" in line)
    assert lines[at + 1].startswith("machine speed: during the 1 UNSTABLE case(s)")
    assert "25.5%" in lines[at + 1] and "279 runs" in lines[at + 1]
    assert not any(line.startswith("machine speed") for line in footnotes([]))


def test_the_parking_report_says_what_the_machine_did() -> None:
    """parking's footnotes count the UNSTABLE cases and carry the note (the study page of
    2026-11-27 had 8 UNSTABLE cases of 8 and no word of the machine's own spread)."""
    from dbstand.workloads.parking.report import footnotes

    wide = {"status": "ok", "unstable": True, "stack": "python-raw",
            "machine_speed": {"cv_pct": 23.2, "r_with_throughput": 0.6, "runs_for_target": 230,
                              "samples": 20}}
    steady = {**wide, "unstable": False}
    lines = footnotes([wide, steady])
    at = next(i for i, line in enumerate(lines) if "1 case(s) UNSTABLE" in line)
    assert lines[at + 1].startswith("machine speed: during the 1 UNSTABLE case(s)")
    assert "23.2%" in lines[at + 1] and "230 runs" in lines[at + 1]
    assert not any("UNSTABLE" in line for line in footnotes([steady]))


def test_the_unstable_lines_count_then_explain() -> None:
    """The shared count line: none without an UNSTABLE case; else the count with the
    workload's reason, then the machine's speed when it was measured."""
    from dbstand.engine.machine_speed import unstable_lines

    steady = {"unstable": False}
    wide = {"unstable": True, "machine_speed": {"cv_pct": 9.0, "r_with_throughput": None,
                                                "runs_for_target": 35, "samples": 10}}
    assert unstable_lines([steady], "why") == []
    first, second = unstable_lines([steady, wide, wide], "the cap was hit")
    assert first == "! 2 case(s) UNSTABLE: the cap was hit"
    assert second.startswith("machine speed: during the 2 UNSTABLE case(s)")
    assert unstable_lines([{"unstable": True}], "why") == ["! 1 case(s) UNSTABLE: why"]


def _unstable_case(**fields: Any) -> dict[str, Any]:
    return {"status": "ok", "unstable": True, "stack": "s", "op": "select", "mode": "sync",
            "target": "tarantool://127.0.0.1:1", "ops_per_s": 1000.0,
            "machine_speed": {"cv_pct": 17.5, "r_with_throughput": 0.7,
                              "runs_for_target": 131, "samples": 20}, **fields}


def test_the_kv_and_webtech_reports_use_the_shared_unstable_lines() -> None:
    """kv and webtech count their UNSTABLE cases in the one shared line (unstable_lines),
    the machine's speed right under it, as batch, parking and docquery do."""
    from dbstand.workloads.kv.report import notes as kv_notes
    from dbstand.workloads.kv.table import table_rows
    from dbstand.workloads.webtech.report import data_rows
    from dbstand.workloads.webtech.report import notes as webtech_notes

    kv = [_unstable_case(), _unstable_case(op="insert", unstable=False)]
    web = [_unstable_case(op="hello", mode="closed:1", load={"target_ci_pct": 3.0})]
    for lines, why in ((kv_notes(table_rows(kv), kv), "--max-iterations"),
                       (webtech_notes(data_rows(web), web), "wider than 3% of the mean")):
        at = next(i for i, line in enumerate(lines) if line.startswith("! 1 case(s) UNSTABLE"))
        assert why in lines[at]
        assert lines[at + 1].startswith("machine speed: during the 1 UNSTABLE case(s)")
        assert "17.5%" in lines[at + 1] and "131 runs" in lines[at + 1]
    steady = [_unstable_case(unstable=False)]
    assert not any("UNSTABLE" in line for line in kv_notes(table_rows(steady), steady))
    assert not any("UNSTABLE" in line for line in webtech_notes(data_rows(steady), steady))
