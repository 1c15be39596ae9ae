"""The executor interface: how one iteration's R operations are issued.

The engine runs iterations through an Executor; the default is `SyncExecutor`
(one connection, operations one after another). Concurrent modes (threads, asyncio,
processes) live in `dbstand.modes` and implement the same interface.

Executors work in two phases so that nothing but the operations is timed:
`prepare` slices the arguments and builds each worker's plan; `Prepared.execute`
starts all workers together and returns when the last one is done. Connections are
opened when the executor is built, before any timed window, identically in every
mode.
"""

from __future__ import annotations

import contextlib
import gc
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import Op, Plan, execute, make_plan


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
    """Issues operations for one case in one mode; owns the connections it was given
    (`closers` run on close)."""

    workers: int = 1
    #: the operations run in the calling thread (its CPU time is theirs:
    #: engine/steadiness.py reads it around each iteration)
    in_this_thread: bool = False
    #: what the timed window contains, recorded with results
    timed = "operations only (connections opened before the timed window)"

    def __init__(self, closers: Sequence[Callable[[], Any]] = ()):
        self.closers = list(closers)

    @abstractmethod
    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared: ...

    def run(self, args: Sequence[Any], every: int, rng: random.Random) -> IterationResult:
        return self.prepare(args, every, rng).execute()

    def close(self) -> None:
        """Release workers and close the connections they used."""
        for closer in self.closers:
            with contextlib.suppress(Exception):
                closer()


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

    in_this_thread = True

    def __init__(self, op: Op, closers: Sequence[Callable[[], Any]] = ()):
        super().__init__(closers)
        self.op = op

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        return _SyncPrepared(self.op, make_plan(args, every, rng))


@contextlib.contextmanager
def gc_paused(enabled: bool = True) -> Iterator[None]:
    """GC collected, then off for the timed part of an iteration (in the runner and in
    worker processes alike), so a collection never lands inside a measurement."""
    was = gc.isenabled()
    if enabled:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if enabled and was:
            gc.enable()


@contextlib.contextmanager
def heap_frozen(enabled: bool = True) -> Iterator[None]:
    """For one case: the objects alive before it collected, then frozen (`gc.freeze`),
    and the collector's automatic runs off; each iteration's `gc_paused` collects what
    the case made since, once. Over the heap of the whole CLI that collection cost
    10-20 ms per iteration here, and automatic collections between iterations (the
    first of them after an iteration's tens of thousands of new objects) ~1 s per
    default run. Frozen objects are still freed by their reference counts; after the
    case they go back to the collector's oldest generation and it runs as before."""
    if not enabled:
        yield
        return
    was = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
