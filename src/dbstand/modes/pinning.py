"""The placement table: which CPUs each part of a case runs on (methodology: "Holding
still on a small machine"; the measurement behind it: docs/placement.md).

A client and a database server on one host trade a message per operation; a load
generator, a server stack and its database share the machine's CPUs. Where the
scheduler puts them (the same CPU or two; moved mid-run or not) changes a figure by
tens of percent from one run to the next, and a ratio between two cases is only fair
when both ran under one placement. So every part asks this table for its CPUs, and
every case of a table (kv's sync and concurrent cases alike, every stack of webtech,
docquery and parking) gets the same placement, recorded with the case:

- `client`: the load generator or the in-process client (this process and its
  children, e.g. a processes mode's workers);
- `stack`: a served workload's server stack (its whole process tree);
- `database`: the database server's process tree;
- `proxy`: a proxy dbstand started on a case's path (Toxiproxy for `--db-rtt`, a TLS
  terminator in front of a stack for `--tls on`);
- `profiler`: a profiled case's py-spy and perf processes and jcmd (the profiling
  session starts them on these CPUs while the case is placed).

The table was chosen by measurement (docs/placement.md): every stack gets the same
resources under each candidate, and the one with the narrowest intervals on this
2-core machine puts client, stack and database on one CPU. A case with no server process
here (embedded SQLite, a remote server) has nothing to place its client beside and is
left to the scheduler: the table's one rule for it (ALONE). Affinities are put back
when the case ends, also on error.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psutil

from dbstand.profiles import session as profiles

#: candidate tables: each role's side of the machine, the first half of the CPUs this
#: process may use ("a") or the rest ("b"); on this 2-core machine CPU 0 and CPU 1.
#: bench/placement measured them (docs/placement.md): `same` had the narrowest
#: intervals (median ±12.4% against ±18.3% `separate`, ±22.9% `db-with-client`, ±45%
#: unpinned, on a loaded machine) and gives every stack the same resources, so it is
#: the table.
CANDIDATES: dict[str, dict[str, str]] = {
    # client, stack, database (and a proxy) on one CPU: no cross-CPU wake-up per
    # message; a profiler watches from the other CPU without taking the measured one's
    "same": {"client": "a", "stack": "a", "database": "a", "proxy": "a", "profiler": "b"},
    # the client apart from everything it measures, as the seeds' separate machines
    "separate": {"client": "a", "stack": "b", "database": "b", "proxy": "b",
                 "profiler": "a"},
    # the database beside the client, the stack alone
    "db-with-client": {"client": "a", "stack": "b", "database": "a", "proxy": "b",
                       "profiler": "a"},
}
PLACEMENTS = tuple(CANDIDATES)
#: the placement table every case gets unless `--pin-cpus` says otherwise
DEFAULT_PLACEMENT = "same"
TABLE: dict[str, str] = CANDIDATES[DEFAULT_PLACEMENT]
ROLES = tuple(TABLE)


@functools.cache
def _available() -> list[int]:
    """The CPUs this process may use, read once before anything is pinned (inside a
    placement it sees only the client's; a nested placement asks the same table)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def cpus_for(role: str, placement: str = DEFAULT_PLACEMENT) -> list[int] | None:
    """The CPUs the table gives `role` here, or None with fewer than two CPUs (no
    placement to choose)."""
    if role not in TABLE:
        raise ValueError(f"unknown role {role!r} (known: {', '.join(ROLES)})")
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r} (known: {', '.join(PLACEMENTS)})")
    cpus = _available()
    if len(cpus) < 2:
        return None
    half = len(cpus) // 2
    return cpus[:half] if CANDIDATES[placement][role] == "a" else cpus[half:]


def plan_cpus(placement: str = DEFAULT_PLACEMENT) -> tuple[int, int] | None:
    """(first client CPU, first database CPU), or None under two CPUs."""
    client, server = cpus_for("client", placement), cpus_for("database", placement)
    return None if client is None or server is None else (client[0], server[0])


def _threads_of(pid: int) -> list[int]:
    """Thread ids of a process (Linux: sched_setaffinity acts on one thread)."""
    try:
        return [t.id for t in psutil.Process(pid).threads()]
    except (psutil.Error, OSError):
        return []


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (PostgreSQL's backends, a prefork server's workers)."""
    try:
        root = psutil.Process(pid)
        return [root.pid, *(c.pid for c in root.children(recursive=True))]
    except (psutil.Error, OSError):
        return []


def _own_tree() -> list[int]:
    """This process and its descendants in its session (a processes mode's workers);
    servers it started run in their own sessions and are placed by their roles."""
    sid = os.getsid(0)
    own = [os.getpid()]
    with contextlib.suppress(psutil.Error, OSError):
        own += [c.pid for c in psutil.Process().children(recursive=True)
                if _sid(c.pid) == sid]
    return own


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _set(tid: int, cpus: set[int]) -> bool:
    try:
        os.sched_setaffinity(tid, cpus)
    except (ProcessLookupError, PermissionError, OSError):
        return False
    return True


@dataclass
class Placed:
    """Where each part ran, recorded with the result (a served case's `placement`,
    kv's environment.server.cpu_pinning)."""

    enabled: bool
    reason: str = ""
    placement: str = ""
    cpus: dict[str, list[int]] = field(default_factory=dict)
    processes: dict[str, int] = field(default_factory=dict)
    threads: dict[str, int] = field(default_factory=dict)
    _saved: dict[int, set[int]] = field(default_factory=dict, repr=False)
    _defaults: dict[int, set[int]] = field(default_factory=dict, repr=False)

    @property
    def client_cpus(self) -> list[int]:
        return self.cpus.get("client", [])

    @property
    def server_cpus(self) -> list[int]:
        return self.cpus.get("database", [])

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"enabled": self.enabled, "reason": self.reason}
        if self.enabled:
            out.update(placement=self.placement, cpus=self.cpus, processes=self.processes,
                       threads=self.threads, client_cpus=self.client_cpus,
                       server_cpus=self.server_cpus)
        return out


#: why a client with no server process on this machine (an embedded database such as
#: SQLite, or a server elsewhere) is left unpinned. Pinning places a client beside its
#: server; alone, there is nothing to place, and a client held on one CPU can no longer
#: move away from what else runs there (interrupts and softirqs, which this kind of VM
#: takes mostly on CPU 0, the progress display's thread, other programs) while the
#: other CPU idles. Measured (issue 29, six runs each, alternating, one idle machine):
#: the default suite (sqlite3) with its client pinned to CPU 0 had 0, 1, 5, 4, 1 and 4
#: of 6 cases miss +-3% within 30 iterations; unpinned, 0 in every run.
ALONE = "not pinned: no server process here to place the client beside (embedded or remote)"


@contextlib.contextmanager
def placed(parts: Mapping[str, Sequence[int]], wanted: bool = True, why_not: str = "",
           placement: str = DEFAULT_PLACEMENT, client: bool = True) -> Iterator[Placed]:
    """Pin this process (the client; `client` False: it is elsewhere) and each role's
    process trees (`parts`: role -> root pids) to the table's CPUs, for the block.

    `wanted` False, fewer than two CPUs, or no way to set affinities: nothing is
    pinned and the record says why. No process of any part here (an embedded database,
    a server elsewhere): nothing is pinned either (ALONE). Threads and processes started
    inside the block inherit the pinning (a PostgreSQL backend forks from a pinned postmaster, a
    prefork server's new worker from its pinned parent); at the end every thread
    pinned, and every thread born in a pinned tree, gets its old CPUs back.
    """
    if not wanted:
        yield Placed(False, why_not or "off (--no-pin)")
        return
    if cpus_for("client", placement) is None:
        yield Placed(False, "fewer than two CPUs available")
        return
    roots: dict[str, list[int]] = {role: [p for p in pids if p] for role, pids in parts.items()}
    if not any(roots.values()):
        # the table's rule for a case with no server process here: nothing to place
        # the client beside, so it is left to the scheduler (ALONE says why)
        yield Placed(False, ALONE)
        return
    if client:
        roots = {"client": [os.getpid()], **roots}
    # asked before anything moves: once this process is pinned it sees one CPU
    where = {role: cpus_for(role, placement) or [] for role in roots}
    state = Placed(True, placement=placement)
    # a profiled case: its profilers start inside the block, on the table's CPUs
    profile = profiles.active()
    if profile is not None:
        state.cpus["profiler"] = cpus_for("profiler", placement) or []
        profile.place(state.cpus["profiler"])
    try:
        for role, pids in roots.items():
            cpus = where[role]
            count = 0
            trees = (_own_tree() if role == "client" and client
                     else [pid for root in pids for pid in _tree(root)])
            for root in pids:
                with contextlib.suppress(OSError):
                    state._defaults[root] = set(os.sched_getaffinity(root))
            for pid in trees:
                for tid in _threads_of(pid):
                    with contextlib.suppress(OSError):
                        state._saved.setdefault(tid, set(os.sched_getaffinity(tid)))
                    count += _set(tid, set(cpus))
            if count:
                state.cpus[role] = cpus
                state.processes[role] = len(trees)
                state.threads[role] = count
        state.reason = _reason(state, roots)
        yield state
    finally:
        if profile is not None:
            profile.place(None)
        _restore(state, roots)


def _reason(state: Placed, roots: Mapping[str, Sequence[int]]) -> str:
    where = {"same": "client, stack and database on one CPU",
             "separate": "client apart from what it measures",
             "db-with-client": "database beside the client, stack apart",
             }.get(state.placement, state.placement)
    unplaced = [role for role, pids in roots.items() if pids and role not in state.cpus]
    absent = [role for role, pids in roots.items() if not pids]
    text = f"placement table: {where}"
    if unplaced:
        text += f"; {', '.join(unplaced)} could not be pinned"
    if absent:
        text += f"; no {', '.join(absent)} process here (embedded or remote)"
    if state.cpus.get("profiler"):
        text += f"; profilers on CPU {','.join(map(str, state.cpus['profiler']))}"
    return text


def _restore(state: Placed, roots: Mapping[str, Sequence[int]]) -> None:
    """Every thread pinned gets its old CPUs; threads born in a tree while it was
    pinned get the CPUs its root had."""
    for tid, cpus in state._saved.items():
        _set(tid, cpus)
    for pids in roots.values():
        for root in pids:
            default = state._defaults.get(root)
            if not default:
                continue
            for pid in _tree(root):
                for tid in _threads_of(pid):
                    if tid not in state._saved:
                        _set(tid, default)


@contextlib.contextmanager
def pinned(server_pid: int | None, wanted: bool, why_not: str = "",
           placement: str = DEFAULT_PLACEMENT) -> Iterator[Placed]:
    """A one-database case (kv): the client (this process and its workers) and the
    database's process tree where the table puts them."""
    with placed({"database": [server_pid] if server_pid else []}, wanted, why_not,
                placement) as state:
        yield state
