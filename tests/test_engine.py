"""The engine on pure-Python operations (no database involved)."""

from __future__ import annotations

import pytest

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.errors import CaseFailed, UserError


def busy(n: int) -> int:
    return sum(range(n))


def config(**kw) -> EngineConfig:
    base = {"revs": 2000, "min_iterations": 3, "max_iterations": 6, "target_ci_pct": 50.0}
    return EngineConfig(**{**base, **kw})


def test_iterations_restore_and_latency_every_op() -> None:
    made, restored = [], []

    def make_args(i: int) -> list[int]:
        made.append(i)
        return [200] * 2000

    bench = Benchmark("busy", busy, make_args, lambda i, args: restored.append(i))
    m = run_benchmark(bench, config(latency="all"))
    assert m.summary.n >= 3
    # warm-up + counted iterations were each restored; -1 is the calibration's args
    assert restored == list(range(1 + m.summary.n))
    assert made[0] == -1
    assert m.latency.count == 2000 * m.summary.n
    assert m.latency_mode == "all"
    lat = m.latency.summary_us()
    assert lat is not None and 0 < lat["p50"] <= lat["p99"] <= lat["max"]
    assert m.ops_per_s == pytest.approx(2000 / m.summary.mean)


def test_sampled_latency_times_about_one_in_k() -> None:
    m = run_benchmark(Benchmark("busy", busy, lambda i: [50] * 2000), config(latency="every:10"))
    per_iteration = m.latency.count / m.summary.n
    assert 100 < per_iteration < 400  # random chunks averaging 10
    assert m.latency_every == 10 and m.latency_mode == "sampled"


def test_auto_latency_samples_fast_ops_and_times_slow_ones() -> None:
    fast = run_benchmark(Benchmark("noopish", lambda a: None, lambda i: [0] * 2000), config())
    slow = run_benchmark(Benchmark("slow", busy, lambda i: [20000] * 200), config(revs=200))
    assert fast.latency_every > 1
    assert slow.latency_every == 1
    assert fast.harness_overhead_ns > 0 and fast.timer_overhead_ns >= 0


def test_latency_off_records_nothing() -> None:
    m = run_benchmark(Benchmark("busy", busy, lambda i: [10] * 2000), config(latency="off"))
    assert m.latency.count == 0 and m.latency.summary_us() is None


def test_failing_operation_fails_the_case() -> None:
    def boom(arg: int) -> None:
        if arg == 7:
            raise RuntimeError("row vanished")

    with pytest.raises(CaseFailed, match="row vanished"):
        run_benchmark(Benchmark("boom", boom, lambda i: list(range(2000))), config())


@pytest.mark.parametrize("kw", [{"revs": 0}, {"warmup": 0}, {"latency": "every:0"},
                                {"max_iterations": 2, "min_iterations": 3},
                                {"stop_rule": "magic"}])
def test_bad_engine_settings_are_user_errors(kw: dict) -> None:
    with pytest.raises(UserError):
        EngineConfig(**kw)
