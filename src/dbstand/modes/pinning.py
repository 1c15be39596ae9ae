"""CPU pinning for cases whose client is one process (methodology: "Holding still on a
small machine").

A client and a database server on one host trade a message per operation. Where the
scheduler puts the two processes (the same CPU, or two; moved mid-iteration or not)
changes the figure by tens of percent from one iteration to the next, which shows up
as wide intervals and as two clusters of iteration times. Pinning the generator to one
CPU and the server's whole process tree to another (`separate`, the default) makes that
placement the same in every iteration. `same` puts both on one CPU: with one
operation in flight the two never run at once, so they lose nothing by sharing it and
every round trip skips the wake-up of another CPU (on a loaded 2-core machine:
Tarantool sync selects about 3x faster than `separate`, with a narrower interval).
A client with no server process here (embedded SQLite, a remote server) is left to the
scheduler (ALONE). Affinities are put back when the case ends, also on error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psutil


def _threads_of(pid: int) -> list[int]:
    """Thread ids of a process (Linux: sched_setaffinity acts on one thread)."""
    try:
        return [t.id for t in psutil.Process(pid).threads()]
    except (psutil.Error, OSError):
        return []


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (PostgreSQL's backends, FerretDB's children)."""
    try:
        root = psutil.Process(pid)
        return [root.pid, *(c.pid for c in root.children(recursive=True))]
    except (psutil.Error, OSError):
        return []


def _set(tid: int, cpus: set[int]) -> bool:
    try:
        os.sched_setaffinity(tid, cpus)
    except (ProcessLookupError, PermissionError, OSError):
        return False
    return True


@dataclass
class Pinned:
    """What was pinned where, recorded with the result (environment.server.cpu_pinning)."""

    enabled: bool
    reason: str = ""
    placement: str = ""
    client_cpus: list[int] = field(default_factory=list)
    server_cpus: list[int] = field(default_factory=list)
    server_pid: int | None = None
    server_processes: int = 0
    server_threads: int = 0
    _saved: dict[int, set[int]] = field(default_factory=dict, repr=False)
    _server_default: set[int] = field(default_factory=set, repr=False)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"enabled": self.enabled, "reason": self.reason}
        if self.enabled:
            out.update(placement=self.placement, client_cpus=self.client_cpus,
                       server_cpus=self.server_cpus,
                       server_pid=self.server_pid, server_processes=self.server_processes,
                       server_threads=self.server_threads)
        return out


PLACEMENTS = ("separate", "same")
#: where `--pin` puts a round-trip-bound case's client and server unless told otherwise:
#: on one CPU. With one operation in flight the two never run at once, so sharing a CPU
#: costs nothing and spares a cross-CPU wake-up per round trip (measured here: Tarantool
#: sync selects 29-32k ops/s within 1-10% on one CPU, 11-12k within 12-13% on two,
#: 20-23k within 21-26% unpinned); `--pin-cpus separate` gives each its own
DEFAULT_PLACEMENT = "same"
#: why a client with no server process on this machine (an embedded database such as
#: SQLite, or a server elsewhere) is left unpinned. Pinning places a client beside its
#: server; alone, there is nothing to place, and a client held on one CPU can no longer
#: move away from what else runs there (interrupts and softirqs, which this kind of VM
#: takes mostly on CPU 0, the progress display's thread, other programs) while the
#: other CPU idles. Measured (issue 29, six runs each, alternating, one idle machine):
#: the default suite (sqlite3) with its client pinned to CPU 0 had 0, 1, 5, 4, 1 and 4
#: of 6 cases miss +-3% within 30 iterations; unpinned, 0 in every run.
ALONE = "not pinned: no server process here to place the client beside (embedded or remote)"


def plan_cpus(placement: str = DEFAULT_PLACEMENT) -> tuple[int, int] | None:
    """(client CPU, server CPU) among the CPUs this process may use; None under two
    (with one CPU there is no placement to choose)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r} (known: {', '.join(PLACEMENTS)})")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return None
    return cpus[0], cpus[0] if placement == "same" else cpus[1]


@contextlib.contextmanager
def pinned(server_pid: int | None, wanted: bool, why_not: str = "",
           placement: str = DEFAULT_PLACEMENT) -> Iterator[Pinned]:
    """Pin this process (every thread) to one CPU and the server's process tree (every
    thread of every process) to another (`same`: to the same one), for the block.

    `wanted` False, fewer than two CPUs, or no way to set affinities: nothing is
    pinned and the record says why. Without a server pid (an embedded database, a
    server elsewhere) nothing is pinned either (ALONE says why). Threads and processes started
    inside the block inherit the pinning (new PostgreSQL backends fork from a
    pinned postmaster); at the end every thread of both trees gets its CPUs back.
    """
    if not wanted:
        yield Pinned(False, why_not or "off (--no-pin)")
        return
    plan = plan_cpus(placement)
    if plan is None:
        yield Pinned(False, "fewer than two CPUs available")
        return
    if server_pid is None:
        yield Pinned(False, ALONE)
        return
    try:
        server_default = set(os.sched_getaffinity(server_pid))
    except OSError:
        yield Pinned(False, "not pinned: the server's CPUs could not be read")
        return
    client_cpu, server_cpu = plan
    where = "one CPU" if placement == "same" else "separate CPUs"
    state = Pinned(True, f"client and server on {where}", placement=placement,
                   client_cpus=[client_cpu], server_cpus=[server_cpu], server_pid=server_pid)
    state._server_default = server_default
    own = os.getpid()
    try:
        for tid in _threads_of(own):
            state._saved[tid] = set(os.sched_getaffinity(tid))
            _set(tid, {client_cpu})
        pids = _tree(server_pid)
        for pid in pids:
            for tid in _threads_of(pid):
                with contextlib.suppress(OSError):
                    state._saved.setdefault(tid, set(os.sched_getaffinity(tid)))
                if _set(tid, {server_cpu}):
                    state.server_threads += 1
        state.server_processes = len(pids)
        if state.server_threads == 0:
            state.reason = "client only: the server's threads could not be pinned"
            state.server_cpus = []
        yield state
    finally:
        _restore(state, own)


def _restore(state: Pinned, own: int) -> None:
    """Every thread pinned gets its old CPUs; server threads born while pinned get the
    server's old CPUs; this process's new threads get the client's old CPUs."""
    for tid, cpus in state._saved.items():
        _set(tid, cpus)
    client_default = state._saved.get(own)
    if client_default:
        for tid in _threads_of(own):
            if tid not in state._saved:
                _set(tid, client_default)
    if state.server_pid is not None and state._server_default:
        for pid in _tree(state.server_pid):
            for tid in _threads_of(pid):
                if tid not in state._saved:
                    _set(tid, state._server_default)
