"""The probes of one case, bracketing the engine's timed windows, reported per operation."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any, Protocol

import psutil

from dbstand.probes.cpu import TreeCpu
from dbstand.probes.locate import server_pid
from dbstand.probes.statements import SqliteTrace, StatementCounter, open_counter
from dbstand.profiles import session as profiles
from dbstand.targets.kinds import get_kind
from dbstand.targets.managed import record_for
from dbstand.targets.url import TargetURL


class TierProbe(Protocol):
    """Another tier dbstand started for the case (the network axis's proxy): measured
    over the same windows, reported apart from the client and the database."""

    def begin(self) -> None: ...
    def end(self) -> None: ...
    def result(self, ops: int) -> dict[str, Any]: ...


class CaseProbes:
    """Client CPU, server CPU and peak RSS, statements: summed over counted windows.

    Order at the edges keeps each probe's own work out of the others: statements are
    read first at `begin` and last at `end` (admin queries cost the server CPU), the
    client's CPU last at `begin` and first at `end`.
    """

    def __init__(self, target: TargetURL, prefix: str, *, client_scope: str = "process",
                 sqlite_conn: Any = None,
                 admin: Callable[[TargetURL, str], Any] | None = None,
                 proxy: TierProbe | None = None):
        """`admin(target, prefix)`: the workload's admin connection, for the statement
        counter (None: statements not counted); `proxy`: the probe of the proxy a
        routed target goes through (network/route.py's `proxy_probe`), None when direct."""
        self.target = target
        self.notes: list[str] = []
        self.pid, self.pid_source = server_pid(target)
        if self.pid == os.getpid():
            self.pid, self.pid_source = None, "the server is this process"
        self.server = TreeCpu(self.pid) if self.pid else None
        # a routed target's proxy (network axis) is measured apart, not as the client
        proxy_pid = target.route.proxy_pid if target.route is not None else None
        self.proxy = proxy
        self.client_scope = client_scope
        self.client = TreeCpu(os.getpid(), exclude=[p for p in (self.pid, proxy_pid) if p],
                              self_cpu=client_scope == "process")
        self.statements: StatementCounter | None = None
        self.warmup: StatementCounter | None = None
        self.statements_source = ""
        if get_kind(target.kind).embedded:
            if isinstance(sqlite_conn, sqlite3.Connection):
                self.warmup = SqliteTrace(sqlite_conn)
                self.statements_source = self.warmup.source
            else:
                self.statements_source = ("unavailable: SQLite statements are counted on "
                                          "the case's own connection, in sync mode only")
        elif admin is None:
            self.statements_source = "unavailable: no admin connection given"
        else:
            try:
                self.statements = open_counter(target, prefix,
                                               record_for(target) is not None, admin)
                self.statements_source = self.statements.source
            except LookupError as exc:
                self.statements_source = f"unavailable: {exc}"
        self.windows = 0
        self.window_s = 0.0
        self._profiling = False
        self._t0 = 0.0

    # --- the engine's Probe protocol -------------------------------------------
    def begin(self) -> None:
        self._attach_profilers()
        self._statements("begin")
        if self.server is not None:
            self.server.begin()
        if self.proxy is not None:
            self.proxy.begin()
        self.client.begin()
        self._t0 = time.perf_counter()

    def end(self) -> None:
        self.window_s += time.perf_counter() - self._t0
        self.windows += 1
        self.client.end()
        if self.proxy is not None:
            self.proxy.end()
        if self.server is not None:
            self.server.end()
        self._statements("end")

    def _attach_profilers(self) -> None:
        """At the first window, a profiled case's client and server trees get their
        profilers (stopped in `result`), so samples cover the windows and what lies
        between them (the runner's bookkeeping), not set-up."""
        profile = profiles.active()
        if profile is None or self._profiling:
            return
        self._profiling = True
        profile.attach("client", os.getpid(), (self.pid,) if self.pid else ())
        if self.pid is not None:
            profile.attach("database", self.pid)
        self.client.exclude = (*self.client.exclude, *profile.pids())

    def _statements(self, edge: str) -> None:
        """A counter that fails (admin connection lost...) is dropped, not the case."""
        if self.statements is None:
            return
        try:
            getattr(self.statements, edge)()
        except Exception as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            self.statements_source = f"unavailable: reading {self.statements.source} " \
                                     f"failed ({message})"
            self.statements.close()
            self.statements = None

    # --- results -----------------------------------------------------------------
    def result(self, revs: int, warmup_iterations: int) -> dict[str, Any]:
        """The record's `probes` object: per-operation figures and how they were got."""
        ops = self.windows * revs
        profile = profiles.active()
        if profile is not None and self._profiling:
            profile.stop()
        if ops == 0:
            return {"windows": 0}
        out: dict[str, Any] = {
            "windows": self.windows,
            "ops": ops,
            "window_s": round(self.window_s, 6),
            "cores": psutil.cpu_count(logical=True),
            "client_cpu_s": round(self.client.cpu_s, 6),
            "client_cpu_us_per_op": round(self.client.cpu_s / ops * 1e6, 3),
            "client_scope": ("dbstand's process tree (the stack runs in it)"
                             if self.client_scope == "process" else
                             "the programs dbstand started (external client)"),
            "server_pid_found": self.server is not None,
            "server_pid": self.pid,
            "server_pid_source": self.pid_source,
            "server_cpu_s": None, "server_cpu_us_per_op": None, "server_peak_rss_mb": None,
            "statements_per_op": None,
            "statements_source": self.statements_source,
        }
        if self.server is not None:
            out["server_cpu_s"] = round(self.server.cpu_s, 6)
            out["server_cpu_us_per_op"] = round(self.server.cpu_s / ops * 1e6, 3)
            out["server_peak_rss_mb"] = round(self.server.peak_rss / 2**20, 1)
            out["server_rss_note"] = "sum of the tree's RSS at the windows' edges"
            if self.server.lost:
                self.notes.append(self.server.lost)
        if self.proxy is not None:
            out.update(self.proxy.result(ops))
        counter = self.statements
        counted_ops = ops
        if self.warmup is not None:
            counter, counted_ops = self.warmup, revs * warmup_iterations
        if counter is not None and counted_ops:
            out["statements_per_op"] = counter.per_op(counted_ops)
            out["statements_total"] = counter.total()
            commands = counter.commands_per_op(counted_ops)
            if commands is not None:
                out["commands_per_op"] = commands
            if counter.note:
                out["statements_note"] = counter.note
        if self.client_scope != "process":
            self.notes.append("windows span whole runs of the external client: its "
                              "connection set-up (server process start, authentication) "
                              "is in them")
        if self.notes:
            out["notes"] = self.notes
        return out

    def close(self) -> None:
        for counter in (self.statements, self.warmup):
            if counter is not None:
                with contextlib.suppress(Exception):
                    counter.close()
