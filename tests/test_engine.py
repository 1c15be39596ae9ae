"""The engine on pure-Python operations (no database involved)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

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
    assert restored == list(range(m.warmup_iterations + m.summary.n))
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


def per_call_ns(fn: Callable[[], object], calls: int = 2000, rounds: int = 5) -> float:
    """This test's own yardstick: the cost of one call of `fn` in a bare loop (best of
    a few rounds, as the engine's calibration takes its best)."""
    best = math.inf
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter_ns() - start)
    return best / calls


def test_auto_latency_samples_fast_ops_and_times_slow_ones() -> None:
    fast = run_benchmark(Benchmark("noopish", lambda a: None, lambda i: [0] * 2000), config())
    slow = run_benchmark(Benchmark("slow", busy, lambda i: [20000] * 200), config(revs=200))
    assert fast.latency_every > 1
    assert slow.latency_every == 1
    # Both overheads are per operation, in ns, checked against this test's own
    # yardsticks: the harness's no-op loop costs about one Python call per op; timing
    # an op adds two clock reads and an append, so its extra cost is about two clock
    # reads or more. Generous bounds either side (a quarter of one yardstick, a hundred
    # of them) still catch a figure per iteration instead of per op (x2000 or /2000),
    # in another unit (x1000 or /1000), or a calibration that measured nothing (0).
    call_ns = per_call_ns(lambda: None)
    clock_ns = per_call_ns(time.perf_counter_ns)
    for m in (fast, slow):
        assert call_ns / 4 < m.harness_overhead_ns < 100 * call_ns, \
            (m.harness_overhead_ns, call_ns)
        assert clock_ns / 4 < m.timer_overhead_ns < 100 * clock_ns, \
            (m.timer_overhead_ns, clock_ns)


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


@pytest.mark.exclusive  # spins to exact times: a busy second worker stretches them
def test_warm_up_goes_on_while_iterations_get_faster() -> None:
    """A stack that needs a few iterations to settle (here: its first three iterations
    each take half the extra time of the one before) is warmed until two iterations
    agree, so none of the slow ones is counted; a fixed warm-up (batch, parking: the
    seeds' repetitions) counts them."""
    def spin(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    def settling(iterations: list[int]) -> Benchmark:
        extra_ms = {0: 40.0, 1: 20.0, 2: 10.0}

        def op(arg: int) -> None:
            spin((2.0 + extra_ms.get(iterations[0], 0.0)) / 1000 / 20)

        def after(_index: int, _args: object) -> None:
            iterations[0] += 1

        return Benchmark("settling", op, lambda i: list(range(20)), after)

    config = EngineConfig(revs=20, min_iterations=3, max_iterations=6, latency="off",
                          steady_warmup=True)
    steady = run_benchmark(settling([0]), config)
    assert steady.warmup_iterations >= 4, steady.warmup_iterations
    assert max(steady.counted_s) < 0.008, steady.counted_s
    fixed = run_benchmark(settling([0]), EngineConfig(
        revs=20, min_iterations=3, max_iterations=6, latency="off", steady_warmup=False))
    assert fixed.warmup_iterations == 1
    assert max(fixed.iterations_s) > 0.010, fixed.iterations_s
