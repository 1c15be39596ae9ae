"""Executors: one iteration's R operations spread over the workers of a mode.

Every executor works in two phases so that nothing but the operations is timed:
`prepare` slices the arguments and builds each worker's plan; `Prepared.execute`
starts all workers together and returns when the last one is done. Connections are
opened when the executor is built, before any timed window, identically in every
mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import AsyncOp, Op, Plan, aexecute, clock, execute, make_plan


@dataclass
class IterationResult:
    """What one iteration measured: wall time, latencies, operations done."""

    elapsed_ns: int
    ops_done: int
    samples: list[int] = field(default_factory=list)            # raw ns, in-process
    histograms: list[LatencyHistogram] = field(default_factory=list)  # from other processes


class Prepared(ABC):
    @abstractmethod
    def execute(self) -> IterationResult: ...


class Executor(ABC):
    """Issues operations for one case in one mode."""

    workers: int = 1
    #: what the timed window contains, recorded with results
    timed = "operations only (connections opened before the timed window)"

    @abstractmethod
    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared: ...

    def run(self, args: Sequence[Any], every: int, rng: random.Random) -> IterationResult:
        return self.prepare(args, every, rng).execute()

    def close(self) -> None:  # noqa: B027 - most executors hold nothing to release
        """Release workers (threads, event loop, processes)."""


def split(args: Sequence[Any], n: int) -> list[Sequence[Any]]:
    """Round-robin shares, so each worker sees the same mix of keys."""
    return [args[i::n] for i in range(n)]


# --- sync -----------------------------------------------------------------------
class _SyncPrepared(Prepared):
    def __init__(self, op: Op, plan: Plan):
        self.op, self.plan = op, plan

    def execute(self) -> IterationResult:
        samples: list[int] = []
        elapsed = execute(self.op, self.plan, samples)
        return IterationResult(elapsed, self.plan.ops, samples)


class SyncExecutor(Executor):
    """One connection, operations one after another."""

    def __init__(self, op: Op):
        self.op = op

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        return _SyncPrepared(self.op, make_plan(args, every, rng))


# --- threads --------------------------------------------------------------------
class _ThreadPrepared(Prepared):
    def __init__(self, ops: list[Op], plans: list[Plan]):
        self.ops, self.plans = ops, plans

    def execute(self) -> IterationResult:
        n = len(self.ops)
        barrier = threading.Barrier(n + 1)
        samples: list[list[int]] = [[] for _ in range(n)]
        errors: list[BaseException] = []

        def work(i: int) -> None:
            barrier.wait()
            try:
                execute(self.ops[i], self.plans[i], samples[i])
            except BaseException as exc:  # reported by the parent thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        barrier.wait()
        start = clock()
        for t in threads:
            t.join()
        elapsed = clock() - start
        if errors:
            raise errors[0]
        return IterationResult(elapsed, sum(p.ops for p in self.plans),
                               [x for s in samples for x in s])


class ThreadExecutor(Executor):
    """N OS threads, each with its own connection's operation."""

    def __init__(self, ops: list[Op]):
        self.ops = ops
        self.workers = len(ops)

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        return _ThreadPrepared(self.ops, [make_plan(s, every, rng)
                                          for s in split(args, self.workers)])


# --- asyncio --------------------------------------------------------------------
def new_event_loop(loop_name: str = "asyncio") -> asyncio.AbstractEventLoop:
    """The event loop of a case: asyncio's own, or uvloop (`--loop uvloop`)."""
    if loop_name == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


class _AsyncPrepared(Prepared):
    def __init__(self, loop: asyncio.AbstractEventLoop, ops: list[AsyncOp], plans: list[Plan]):
        self.loop, self.ops, self.plans = loop, ops, plans

    def execute(self) -> IterationResult:
        samples: list[list[int]] = [[] for _ in self.ops]

        async def all_workers() -> int:
            start = clock()
            await asyncio.gather(*(aexecute(op, plan, s)
                                   for op, plan, s in zip(self.ops, self.plans, samples,
                                                          strict=True)))
            return clock() - start

        elapsed = self.loop.run_until_complete(all_workers())
        return IterationResult(elapsed, sum(p.ops for p in self.plans),
                               [x for s in samples for x in s])


class AsyncioExecutor(Executor):
    """N coroutines in one event loop; each awaits its own connection's operation
    (or one shared, multiplexed connection's)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, ops: list[AsyncOp],
                 closers: Sequence[Callable[[], Any]] = ()):
        self.loop = loop
        self.ops = ops
        self.workers = len(ops)
        self.closers = list(closers)

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        return _AsyncPrepared(self.loop, self.ops, [make_plan(s, every, rng)
                                                    for s in split(args, self.workers)])

    def close(self) -> None:
        for closer in self.closers:
            with contextlib.suppress(Exception):
                result = closer()
                if asyncio.iscoroutine(result):
                    self.loop.run_until_complete(result)
        self.loop.close()


@contextlib.contextmanager
def gc_paused(enabled: bool = True):  # type: ignore[no-untyped-def]
    """GC off inside a worker process's iteration, as in the parent."""
    was = gc.isenabled()
    if enabled:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if enabled and was:
            gc.enable()
