"""Runs one benchmark: calibration, warm-up, iterations under a stop rule.

Timing design (see bench/harness_overhead): the operation is called from a tight
`for` loop over pre-built arguments, so the harness adds one Python call per
operation. Per-operation latency is *sampled*: one operation in about k is timed
(chunk lengths drawn at random so sampling cannot lock onto a periodic pattern),
with k chosen from calibration so timing costs at most `latency_budget_pct` of the
operation's own time. Slow operations are all timed (k = 1).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dbstand.engine.config import EngineConfig
from dbstand.engine.executor import Executor, SyncExecutor, gc_paused, heap_frozen
from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import clock, execute, make_plan
from dbstand.engine.machine_speed import SpeedTrace
from dbstand.engine.series import IntervalSeries
from dbstand.engine.stats import (
    Bimodal,
    Summary,
    find_bimodal,
    make_stop_rule,
    still_faster,
    summarize,
)
from dbstand.engine.steadiness import Slowdown, explain, thread_times
from dbstand.errors import CaseFailed

Op = Callable[[Any], object]


@dataclass
class Benchmark:
    """One operation to measure.

    `make_args(i)` builds the R arguments of iteration i (untimed); `after_iteration`
    restores the data the iteration changed (untimed) so every iteration does the
    same work.
    """

    name: str
    op: Op
    make_args: Callable[[int], Sequence[Any]]
    after_iteration: Callable[[int, Sequence[Any]], None] | None = None


@dataclass
class CaseMeasurement:
    """Everything the engine measured for one case."""

    revs: int
    iterations_s: list[float]          # every counted iteration, in order
    counted_s: list[float]             # the ones the figure is computed from
    summary: Summary
    unstable: bool
    stop_reason: str
    stop_rule: str
    warmup_iterations: int
    latency: LatencyHistogram
    latency_mode: str                  # all | sampled | off
    latency_every: int                 # 1 in k operations timed (0: off)
    harness_overhead_ns: float         # per op: the loop with a no-op operation
    timer_overhead_ns: float           # per timed op: extra cost of timing it
    elapsed_s: float
    extra: dict[str, Any] = field(default_factory=dict)
    #: two clusters of counted iteration times (stats.find_bimodal), else None
    bimodal: Bimodal | None = None
    #: per-interval throughput and latency (engine/series.py), None when off
    series: dict[str, Any] | None = None
    #: the machine's own speed after each counted iteration (engine/machine_speed.py)
    machine_speed: dict[str, Any] | None = None
    #: each counted iteration's on-CPU time and run-queue wait of the measuring thread
    #: (engine/steadiness.py); None when the operations ran in other threads or
    #: processes (wait: also where the kernel does not say)
    iterations_cpu_s: list[float] | None = None
    iterations_wait_s: list[float] | None = None

    @property
    def slowdown(self) -> Slowdown | None:
        """Where the slower counted iterations lost their time (steadiness.py)."""
        if self.iterations_cpu_s is None:
            return None
        return explain(self.iterations_s, self.iterations_cpu_s, self.iterations_wait_s)

    @property
    def ops_per_s(self) -> float:
        return self.revs / self.summary.mean

    @property
    def ops_per_s_min(self) -> float:
        return self.revs / self.summary.max

    @property
    def ops_per_s_max(self) -> float:
        return self.revs / self.summary.min


def _noop(_arg: object) -> None:
    return None


def calibrate(args: Sequence[Any], rounds: int = 3) -> tuple[float, float]:
    """Per-op cost of the bare loop and extra per-op cost of timing, both in ns."""
    n = len(args)
    rng = random.Random(0)
    plain = min(execute(_noop, make_plan(args, 0, rng), []) for _ in range(rounds)) / n
    timed = min(execute(_noop, make_plan(args, 1, rng), []) for _ in range(rounds)) / n
    return plain, max(timed - plain, 0.0)


#: a steady warm-up stops by this many iterations at most (beyond `--warmup`)
MAX_EXTRA_WARMUP = 8


def still_warming(warm_ns: Sequence[int], config: EngineConfig) -> bool:
    """Whether the warm-up should go on: the last iteration was still faster than the
    one before it by more than the target interval (caches, connection pools, JITs,
    the scheduler still settling), and the extra warm-up is within its bounds.

    A first counted iteration slower than the rest widens the interval of every case
    it starts; warming until two iterations agree keeps that drift out of the figure
    (the count used is recorded as `warmup_iterations`).
    """
    extra = len(warm_ns) - config.warmup
    if extra >= MAX_EXTRA_WARMUP:
        return False
    if len(warm_ns) < 2:
        return True  # two warm-up iterations to compare
    if sum(warm_ns) / 1e9 > config.max_time_s / 4:
        return False
    return still_faster([float(x) for x in warm_ns], config.target_ci_pct)


class Probe(Protocol):
    """Samples resources around the timed part of each counted iteration."""

    def begin(self) -> None: ...

    def end(self) -> None: ...


def run_benchmark(bench: Benchmark, config: EngineConfig,
                  on_iteration: Callable[[int, int], None] | None = None,
                  executor: Executor | None = None,
                  probe: Probe | None = None,
                  warmup_probe: Probe | None = None) -> CaseMeasurement:
    """Measure `bench` under `config`.

    `executor` spreads each iteration over a mode's workers (default: `bench.op`
    called in this thread); `probe` brackets the timed part of each counted
    iteration, `warmup_probe` that of each warm-up iteration (for probes that would
    slow the timed loop, e.g. an in-process statement trace); `on_iteration(done,
    max)` drives progress bars.
    """
    rng = random.Random(config.seed)
    started = time.perf_counter()
    executor = executor or SyncExecutor(bench.op)
    series = IntervalSeries(config.interval_s) if config.interval_s > 0 else None
    in_thread = executor.in_this_thread
    cpu_s: list[float] = []
    wait_s: list[float | None] = []

    def one_iteration(index: int, every: int, latency: LatencyHistogram | None,
                      measured: bool) -> int:
        # GC collected, then off for the whole iteration: while the arguments and the
        # plan are built, in the timed window, and while the data is checked and put back
        # (the iteration's tens of thousands of new objects set off thousands of
        # collections per case when the collector ran in between; what they leave is
        # collected once, before the next iteration)
        with gc_paused(config.gc_off):
            args = bench.make_args(index)
            if len(args) != config.revs:
                raise CaseFailed(f"{bench.name}: built {len(args)} arguments, "
                                 f"expected {config.revs}")
            prepared = executor.prepare(args, every, rng)
            around = probe if measured else warmup_probe
            try:
                if around is not None:
                    around.begin()
                before = thread_times() if in_thread and measured else None
                began = clock()
                result = prepared.execute()
                if before is not None:
                    after = thread_times()
                    cpu_s.append((after.cpu_ns - before.cpu_ns) / 1e9)
                    wait_s.append(None if after.wait_ns is None or before.wait_ns is None
                                  else (after.wait_ns - before.wait_ns) / 1e9)
                if around is not None:
                    around.end()
            except CaseFailed:
                raise
            except Exception as exc:
                raise CaseFailed(f"{bench.name}: operation failed: {exc}".strip()) from exc
            if result.ops_done != config.revs:
                raise CaseFailed(f"{bench.name}: {result.ops_done} operations done, "
                                 f"expected {config.revs}")
            if series is not None:
                series.add(began, result.elapsed_ns, result.ops_done, measured, result.samples,
                           result.histograms)
            if latency is not None:
                latency.record_many(result.samples)
                for hist in result.histograms:
                    latency.merge(hist)
            if bench.after_iteration is not None:
                bench.after_iteration(index, args)
        if config.pause_s:
            time.sleep(config.pause_s)
        return result.elapsed_ns

    # Calibration with a no-op on the arguments of a spare iteration (data untouched).
    harness_ns, timer_ns = calibrate(bench.make_args(-1))

    # the heap that was there before the case (modules, the CLI, the driver) is out of
    # the collector's reach until the case ends, and the collector runs only where each
    # iteration starts, over the case's own objects (executor.heap_frozen)
    with heap_frozen(config.gc_off):
        fixed = config.latency_every()
        warm_times: list[int] = []
        index = 0
        while len(warm_times) < config.warmup or (
                config.steady_warmup and still_warming(warm_times, config)):
            warm_times.append(one_iteration(index, 0 if fixed is None else fixed, None, False))
            index += 1
        warm_ns = warm_times[-1]
        if fixed is None:
            # time per operation as one worker sees it (workers run concurrently)
            op_ns = max(warm_ns * executor.workers / config.revs - harness_ns, 1.0)
            every = max(1, math.ceil(timer_ns / (config.latency_budget_pct / 100 * op_ns)))
        else:
            every = fixed

        rule = make_stop_rule(config.stop_rule, config.target_ci_pct, config.min_iterations,
                              config.max_iterations)
        latency = LatencyHistogram()
        times_s: list[float] = []
        speed = SpeedTrace()
        counted_from = time.perf_counter()
        while True:
            elapsed = one_iteration(index, every, latency, True)
            index += 1
            times_s.append(elapsed / 1e9)
            speed.sample()  # outside the timed window, like the probes' edges
            if on_iteration:
                on_iteration(len(times_s), config.max_iterations)
            out_of_time = time.perf_counter() - counted_from > config.max_time_s
            decision = rule.decide(times_s, out_of_time)
            if decision.stop:
                break

    counted = rule.counted(times_s)
    waits = [w for w in wait_s if w is not None]
    return CaseMeasurement(
        revs=config.revs,
        iterations_s=times_s,
        counted_s=counted,
        summary=summarize(counted),
        unstable=decision.unstable,
        stop_reason=decision.reason,
        stop_rule=rule.name,
        warmup_iterations=len(warm_times),
        latency=latency,
        latency_mode="off" if every == 0 else ("all" if every == 1 else "sampled"),
        latency_every=every,
        harness_overhead_ns=round(harness_ns, 1),
        timer_overhead_ns=round(timer_ns, 1),
        elapsed_s=time.perf_counter() - started,
        extra={"workers": executor.workers, "timed": executor.timed},
        bimodal=find_bimodal(counted),
        series=series.record() if series is not None else None,
        iterations_cpu_s=cpu_s if in_thread else None,
        iterations_wait_s=waits if in_thread and len(waits) == len(cpu_s) else None,
        machine_speed=speed.record([config.revs / t for t in counted],
                                   config.target_ci_pct),
    )
