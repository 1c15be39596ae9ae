"""Concurrent executors: threads and asyncio (processes: see processes.py).

Each is built with its workers' connections already open, so connection set-up is
never timed, in any mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

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


Conn = TypeVar("Conn")


def open_all(n: int, open_one: Callable[[int], Conn], close: Callable[[Conn], object]
             ) -> list[Conn]:
    """A mode's N connections (`open_one(i)` opens the i-th); if one fails, those
    already open are closed again."""
    opened: list[Conn] = []
    try:
        for i in range(n):
            opened.append(open_one(i))
    except BaseException:
        for conn in opened:
            close(conn)
        raise
    return opened


def open_all_async(loop_name: str, n: int, open_one: Callable[[int], Awaitable[Conn]],
                   close: Callable[[Conn], Awaitable[object]]
                   ) -> tuple[asyncio.AbstractEventLoop, list[Conn]]:
    """A new event loop with a mode's N connections opened in it; if one fails, those
    already open are closed again, and the loop too."""
    loop = new_event_loop(loop_name)
    opened: list[Conn] = []

    async def open_each() -> None:
        for i in range(n):
            opened.append(await open_one(i))

    try:
        loop.run_until_complete(open_each())
    except BaseException:
        for conn in opened:
            loop.run_until_complete(close(conn))
        loop.close()
        raise
    return loop, opened


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


