"""CPU time and memory of process trees, read from the OS outside timed code.

A process's CPU (user + sys, all its threads, exited ones included) is read from its
POSIX CPU clock, precise to the nanosecond; /proc's clock ticks (10 ms) would
swamp windows of a few milliseconds. A tree's CPU is the sum over its live
processes, plus what their reaped children used (children_user + children_system,
in ticks): a process that exits during a window, such as a PostgreSQL backend
whose client left, still counts through its parent.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import psutil

from dbstand.proctree import tree

_CPUCLOCK_SCHED = 2


def process_cpu_s(proc: psutil.Process) -> float:
    """User + sys seconds of every thread of `proc`, live or exited."""
    try:
        # Linux's clock id for a process's CPU clock (clock_getcpuclockid(3))
        return time.clock_gettime((~proc.pid << 3) | _CPUCLOCK_SCHED)
    except (OSError, OverflowError):
        times = proc.cpu_times()
        return times.user + times.system


def tree_usage(pid: int, exclude: Iterable[int] = (), self_cpu: bool = True
               ) -> tuple[float, int]:
    """(CPU seconds, RSS bytes) of `pid`'s tree, without the subtrees rooted at `exclude`.

    `self_cpu=False` leaves out the root's own CPU (its children still count): for a
    client whose work is done by programs it starts.
    """
    procs = tree(pid)
    skip: set[int] = set()
    for proc in procs:
        if proc.pid in set(exclude):
            skip.update(p.pid for p in tree(proc.pid))
    cpu, rss = 0.0, 0
    for proc in procs:
        if proc.pid in skip:
            continue
        try:
            times = proc.cpu_times()
            own = process_cpu_s(proc) if (self_cpu or proc.pid != pid) else 0.0
            rss += proc.memory_info().rss
        except psutil.Error:  # exited, or a zombie, meanwhile
            continue
        cpu += own + getattr(times, "children_user", 0.0) + \
            getattr(times, "children_system", 0.0)
    return cpu, rss


class TreeCpu:
    """CPU of a process tree summed over windows, and its peak RSS at the windows' edges."""

    def __init__(self, pid: int, exclude: Iterable[int] = (), self_cpu: bool = True):
        self.pid = pid
        self.exclude = tuple(exclude)
        self.self_cpu = self_cpu
        self.cpu_s = 0.0
        self.windows: list[float] = []   # each window's CPU seconds (for an interval)
        self.peak_rss = 0
        self.lost = ""
        self._start: float | None = None

    def _read(self) -> float | None:
        try:
            cpu, rss = tree_usage(self.pid, self.exclude, self.self_cpu)
        except psutil.Error as exc:
            self.lost = f"process {self.pid} could not be read: {type(exc).__name__}"
            return None
        self.peak_rss = max(self.peak_rss, rss)
        return cpu

    def begin(self) -> None:
        self._start = self._read()

    def end(self) -> None:
        now = self._read()
        if self._start is not None and now is not None:
            self.cpu_s += max(now - self._start, 0.0)
            self.windows.append(max(now - self._start, 0.0))
        self._start = None
