"""Concurrent executors: threads and asyncio (processes: see processes.py).

Each is built with its workers' connections already open, so connection set-up is
never timed, in any mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from dbstand.engine.executor import Executor, IterationResult, Prepared, split
from dbstand.engine.loops import AsyncOp, Op, Plan, aexecute, clock, execute, make_plan


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

    def __init__(self, ops: list[Op], closers: Sequence[Callable[[], Any]] = ()):
        super().__init__(closers)
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
        super().__init__(closers)
        self.loop = loop
        self.ops = ops
        self.workers = len(ops)

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


