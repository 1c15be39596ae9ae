"""Where slower iterations lose their time (engine/steadiness.py): the split itself, the
runner's readings around each timed window, and what a run prints and records."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.engine.steadiness import describe, explain, thread_times
from dbstand.modes.executors import ThreadExecutor


def test_same_work_run_slower_on_the_cpu_is_named_cpu() -> None:
    wall = [0.100, 0.180, 0.102, 0.175]
    cpu = [0.098, 0.177, 0.099, 0.172]          # on the CPU all along: the CPU was slower
    wait = [0.001, 0.002, 0.002, 0.001]
    s = explain(wall, cpu, wait)
    assert s is not None and s.cause == "cpu"
    assert s.cpu_share > 0.9 and s.wait_share is not None and s.wait_share < 0.05
    assert s.cpu_spread_pct == pytest.approx(100 * (0.177 / 0.098 - 1))
    assert s.wall_spread_pct == pytest.approx(80.0)
    assert s.extra_s == pytest.approx(0.080 + 0.002 + 0.075)
    assert describe(s.as_dict()).startswith("CPU slower 9")


def test_waiting_for_a_cpu_and_blocking_are_told_apart() -> None:
    wall = [0.100, 0.190, 0.100, 0.160]
    cpu = [0.099, 0.099, 0.099, 0.099]
    waited = explain(wall, cpu, [0.0, 0.090, 0.0, 0.060])
    assert waited is not None and waited.cause == "wait" and waited.wait_share == 1.0
    blocked = explain(wall, cpu, [0.0, 0.0, 0.0, 0.0])
    assert blocked is not None and blocked.cause == "other" and blocked.other_share == 1.0
    # without the kernel's wait, waiting cannot be told from blocking: both are `other`
    unknown = explain(wall, cpu, None)
    assert unknown is not None and unknown.wait_share is None and unknown.cause == "other"
    assert "wait_share" in unknown.as_dict() and unknown.as_dict()["wait_share"] is None


def test_no_split_without_a_difference_or_enough_iterations() -> None:
    assert explain([0.1], [0.1], [0.0]) is None
    assert explain([0.1, 0.1], [0.1, 0.1], [0.0, 0.0]) is None
    assert explain([0.1, 0.2], [0.1], None) is None            # lists that do not match
    split = explain([0.1, 0.2, 0.15], [0.05, 0.1, 0.06], [0.0, 0.0, 0.05])
    assert split is not None and split.cause == "mixed"
    assert describe(split.as_dict()).startswith("mixed causes")


def test_thread_times_count_this_threads_cpu_not_its_sleep() -> None:
    before = thread_times()
    time.sleep(0.05)
    slept = thread_times()
    sum(range(300_000))
    worked = thread_times()
    assert slept.cpu_ns - before.cpu_ns < 25_000_000      # a sleep is off the CPU
    assert worked.cpu_ns > slept.cpu_ns
    assert (before.wait_ns is None) == (worked.wait_ns is None)


def config(**kw) -> EngineConfig:
    base = {"revs": 20, "min_iterations": 3, "max_iterations": 3, "target_ci_pct": 50.0,
            "interval_s": 0.0}
    return EngineConfig(**{**base, **kw})


def test_a_sync_case_records_each_counted_iterations_cpu_and_wait() -> None:
    m = run_benchmark(Benchmark("nap", lambda _: time.sleep(0.002), lambda i: [0] * 20),
                      config())
    assert m.iterations_cpu_s is not None and len(m.iterations_cpu_s) == len(m.iterations_s)
    for wall, cpu in zip(m.iterations_s, m.iterations_cpu_s, strict=True):
        assert 0 <= cpu < wall / 2        # 20 sleeps of 2 ms: the thread was mostly off-CPU
    if m.iterations_wait_s is not None:
        assert len(m.iterations_wait_s) == len(m.iterations_s)
        assert all(w >= 0 for w in m.iterations_wait_s)


def test_operations_in_other_threads_record_no_split() -> None:
    ops = [lambda _: sum(range(100))] * 2
    m = run_benchmark(Benchmark("busy", ops[0], lambda i: [0] * 20), config(),
                      executor=ThreadExecutor(ops))
    assert m.iterations_cpu_s is None and m.iterations_wait_s is None
    assert m.slowdown is None


def test_an_unstable_kv_case_says_where_its_time_went(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    # an interval of 0.001% is out of reach: every case stops UNSTABLE at the cap
    res = cli("run", "kv", "--target", "sqlite://", "--op", "select,insert", "--revs", "300",
              "--rows", "500", "--min-iterations", "3", "--max-iterations", "3",
              "--ci", "0.001", "-o", str(out))
    assert res.code == 0, res.stdout
    cases = [json.loads(line) for line in out.read_text().splitlines()
             if json.loads(line)["type"] == "case"]
    assert len(cases) == 2
    for case in cases:
        assert case["unstable"]
        assert len(case["iteration_s"]["cpu"]) == len(case["iteration_s"]["all"]) == 3
        slowdown = case["slowdown"]
        assert slowdown["cause"] in ("cpu", "wait", "other", "mixed")
        shares = [slowdown[k] or 0.0 for k in ("cpu_share", "wait_share", "other_share")]
        assert sum(shares) == pytest.approx(1.0, abs=0.01)
    text = " ".join(res.stdout.split())
    assert "where the slower iterations lost their time" in text
    assert "sqlite3 sync select:" in text and "sqlite3 sync insert:" in text
