"""The timed loops, sync and async, over pre-built arguments.

A `Plan` is built before the clock starts (argument slicing, the random chunks that
decide which operations are timed); `execute`/`aexecute` are all that runs inside
the timed window. Latency is recorded as raw ns in a list and turned into an HDR
histogram afterwards.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

clock = time.perf_counter_ns  # CLOCK_MONOTONIC: comparable across processes on Linux

Op = Callable[[Any], object]
AsyncOp = Callable[[Any], Awaitable[object]]


@dataclass
class Plan:
    """What one worker does in one iteration: `every` = 0 off, 1 all, k sampled."""

    every: int
    args: Sequence[Any]
    chunks: list[tuple[Any, Sequence[Any]]] | None = None

    @property
    def ops(self) -> int:
        return len(self.args)


def make_plan(args: Sequence[Any], every: int, rng: random.Random) -> Plan:
    """The plan of one worker's iteration: with sampling, chunks of random lengths
    (uniform on 1..2k-1, averaging `every`), each chunk's first operation timed. The
    lengths are drawn in batches (`choices`): drawing them one by one with `randint`
    cost more than the slicing, between every two iterations."""
    if every <= 1:
        return Plan(every, args)
    chunks = []
    i, n = 0, len(args)
    lengths = range(1, 2 * every)
    while i < n:
        for length in rng.choices(lengths, k=(n - i) // every + 1):
            chunks.append((args[i], args[i + 1:i + length]))
            i += length
            if i >= n:
                break
    return Plan(every, args, chunks)


def execute(op: Op, plan: Plan, samples: list[int]) -> int:
    """Run the plan; return elapsed ns. Appends timed latencies to `samples`."""
    if plan.every == 0:
        start = clock()
        for arg in plan.args:
            op(arg)
        return clock() - start
    append = samples.append
    if plan.every == 1:
        start = clock()
        for arg in plan.args:
            t0 = clock()
            op(arg)
            append(clock() - t0)
        return clock() - start
    assert plan.chunks is not None
    start = clock()
    for first, rest in plan.chunks:
        t0 = clock()
        op(first)
        append(clock() - t0)
        for arg in rest:
            op(arg)
    return clock() - start


async def aexecute(op: AsyncOp, plan: Plan, samples: list[int]) -> int:
    """The asyncio twin of `execute`: one coroutine awaiting its operations in turn."""
    if plan.every == 0:
        start = clock()
        for arg in plan.args:
            await op(arg)
        return clock() - start
    append = samples.append
    if plan.every == 1:
        start = clock()
        for arg in plan.args:
            t0 = clock()
            await op(arg)
            append(clock() - t0)
        return clock() - start
    assert plan.chunks is not None
    start = clock()
    for first, rest in plan.chunks:
        t0 = clock()
        await op(first)
        append(clock() - t0)
        for arg in rest:
            await op(arg)
    return clock() - start
