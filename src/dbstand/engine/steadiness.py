"""Why a case's iterations differ: each iteration's wall time split into the measuring
thread's time on a CPU, its time waiting for one, and the rest.

An iteration repeats the same work, so on a steady machine its on-CPU time repeats
too. When iterations differ, the split says where the slow ones lost their time:

- `cpu`: the thread ran the same work for longer on the CPU. Nothing else in the
  operating system took the CPU from it, so the CPU itself went slower: a virtual CPU
  whose host runs other work on the same core (its sibling hyper-thread, other
  guests), frequency changes, cache contention. On the machine issue 29 measured, the
  default suite's slow iterations were this (docs/machine-speed.md).
- `wait`: runnable but waiting for a CPU (other programs, or other threads of this
  process, held it): the kernel's run-queue wait, /proc/thread-self/schedstat.
- `other`: neither running nor runnable (blocked on I/O, a lock, a sleep, a server's
  answer).

The readings are taken just outside the timed window of each iteration (never inside
the loop) and only when the executor runs the operations in this thread (sync and
asyncio modes); with worker threads or processes the measuring thread only waits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

_SCHEDSTAT = "/proc/thread-self/schedstat"

#: a share of the slow iterations' extra time at or above this names the cause
MAIN_CAUSE_SHARE = 0.5

CAUSES = {
    "cpu": "the CPU ran the same work slower (no other program took it: a shared or "
           "throttled CPU, e.g. a VM's host running other work on the same core)",
    "wait": "waiting for a CPU while other programs (or threads) ran",
    "other": "off the CPU and not runnable (I/O, locks, sleeps, a server's answers)",
    "mixed": "no single cause",
}


@dataclass(frozen=True)
class ThreadTimes:
    """The calling thread's cumulative time on a CPU and waiting for one, in ns
    (`wait_ns` None where the kernel does not say)."""

    cpu_ns: int
    wait_ns: int | None


def thread_times() -> ThreadTimes:
    """Now, for the calling thread: its CPU clock, and where Linux gives it the
    run-queue wait from schedstat. (schedstat's own run time is brought up to date
    only when the thread is switched or at a tick, so a running thread's would lag;
    its wait only grows while the thread is not running, so it is current.)"""
    cpu = time.thread_time_ns()
    try:
        with open(_SCHEDSTAT, "rb") as f:
            return ThreadTimes(cpu, int(f.read().split()[1]))
    except (OSError, ValueError, IndexError):
        return ThreadTimes(cpu, None)


@dataclass(frozen=True)
class Slowdown:
    """Where the counted iterations' time above the fastest ones went.

    Each part is summed over iterations as its excess over that part's own minimum
    (an iteration's on-CPU time above the least on-CPU time of any iteration, ...);
    the shares are those sums over their total. `cpu_spread_pct`: the largest
    on-CPU time over the smallest, less one, in %."""

    extra_s: float
    cpu_share: float
    wait_share: float | None
    other_share: float
    cpu_spread_pct: float
    wall_spread_pct: float

    @property
    def cause(self) -> str:
        """The part holding at least half of the extra time, else `mixed`."""
        shares = {"cpu": self.cpu_share, "wait": self.wait_share or 0.0,
                  "other": self.other_share}
        name, share = max(shares.items(), key=lambda kv: kv[1])
        return name if share >= MAIN_CAUSE_SHARE else "mixed"

    def as_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "extra_s": round(self.extra_s, 6),
                "cpu_share": round(self.cpu_share, 3),
                "wait_share": None if self.wait_share is None else round(self.wait_share, 3),
                "other_share": round(self.other_share, 3),
                "cpu_spread_pct": round(self.cpu_spread_pct, 1),
                "wall_spread_pct": round(self.wall_spread_pct, 1)}


def explain(wall_s: list[float], cpu_s: list[float],
            wait_s: list[float] | None) -> Slowdown | None:
    """The split of `wall_s` (seconds per iteration) into on-CPU time `cpu_s`, run-queue
    wait `wait_s` (None: unknown, counted in `other`) and the rest; None without at
    least two iterations or when they took the same time."""
    n = len(wall_s)
    if n < 2 or len(cpu_s) != n or (wait_s is not None and len(wait_s) != n):
        return None
    waits = wait_s if wait_s is not None else [0.0] * n
    other = [max(w - c - q, 0.0) for w, c, q in zip(wall_s, cpu_s, waits, strict=True)]

    def excess(xs: list[float]) -> float:
        low = min(xs)
        return sum(x - low for x in xs)

    parts = {"cpu": excess(cpu_s), "wait": excess(waits), "other": excess(other)}
    total = sum(parts.values())
    if total <= 0 or min(wall_s) <= 0 or min(cpu_s) <= 0:
        return None
    return Slowdown(
        extra_s=excess(wall_s),
        cpu_share=parts["cpu"] / total,
        wait_share=None if wait_s is None else parts["wait"] / total,
        other_share=parts["other"] / total,
        cpu_spread_pct=100.0 * (max(cpu_s) / min(cpu_s) - 1),
        wall_spread_pct=100.0 * (max(wall_s) / min(wall_s) - 1))


def describe(slowdown: dict[str, Any]) -> str:
    """A record's `slowdown` in a few words: the cause and its share, the on-CPU spread."""
    cause = slowdown.get("cause", "mixed")
    share = slowdown.get(f"{cause}_share") if cause != "mixed" else None
    text = {"cpu": "CPU slower", "wait": "waiting for a CPU", "other": "off the CPU",
            "mixed": "mixed causes"}.get(cause, cause)
    if share is not None:
        text += f" {100 * share:.0f}%"
    spread = slowdown.get("cpu_spread_pct")
    if spread is not None:
        text += f" (on-CPU time per iteration up to +{spread:.0f}%)"
    return text
