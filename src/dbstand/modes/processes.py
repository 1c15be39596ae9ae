"""processes:P[xasyncio:N]: the iteration's operations split over P worker processes.

Each worker builds its own connections (from a picklable factory), then per
iteration receives its share of the arguments, waits for the parent's "go" on its
pipe, runs its loop (sync, or N coroutines) and returns its end time
(CLOCK_MONOTONIC, shared by all processes), its operation count and its latency
histogram (HdrHistogram, encoded): the parent merges histograms exactly, never
averaging percentiles. The iteration's time runs from the first "go" to the last
worker's end. Only pipes connect the processes: no shared lock that a killed worker
could leave held.

A worker that dies fails the case at once with its exit code; workers ignore SIGINT
so that Ctrl-C reaches the parent, which stops them all; a worker whose parent
vanished exits on the closed pipe.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import random
import signal
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, cast

from dbstand.engine.executor import Executor, IterationResult, Prepared, gc_paused, split
from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import clock
from dbstand.errors import CaseFailed

START_TIMEOUT_S = 60.0
GO = b"g"


class WorkerFactory(Protocol):
    """Picklable recipe a worker process uses to build its in-process executor."""

    def build(self) -> Executor: ...


def _worker_main(conn: Connection, factory: WorkerFactory, gc_off: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        executor = factory.build()
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    try:
        while True:
            try:
                message = conn.recv()
            except EOFError:  # the parent is gone
                return
            if message[0] == "stop":
                return
            _, share, every, seed = message
            prepared = executor.prepare(share, every, random.Random(seed))
            conn.send(("prepared", None))
            try:
                if conn.recv_bytes() != GO:  # "stop" instead of "go"
                    return
            except EOFError:  # the parent is gone
                return
            try:
                with gc_paused(gc_off):
                    result = prepared.execute()
            except Exception as exc:
                conn.send(("error", f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
                continue
            end = clock()
            hist = LatencyHistogram()
            hist.record_many(result.samples)
            for h in result.histograms:
                hist.merge(h)
            conn.send(("done", (end, result.ops_done, hist.encode() if hist.count else None)))
    finally:
        executor.close()


class _ProcessPrepared(Prepared):
    def __init__(self, owner: ProcessExecutor):
        self.owner = owner

    def execute(self) -> IterationResult:
        owner = self.owner
        start = clock()
        for i, conn in enumerate(owner.conns):
            try:
                conn.send_bytes(GO)
            except OSError:  # BrokenPipeError: the worker is gone
                raise owner._died(i) from None
        replies = owner.collect("done")
        ends, ops, hists = [], 0, []
        for end, done, encoded in replies:
            ends.append(end)
            ops += done
            if encoded:
                hists.append(LatencyHistogram.decode(encoded))
        return IterationResult(max(ends) - start, ops, [], hists)


class ProcessExecutor(Executor):
    """P worker processes, each running its own executor built by `factory`."""

    def __init__(self, processes: int, factory: WorkerFactory, gc_off: bool = True,
                 start_method: str = "spawn"):
        super().__init__()
        self.workers = processes
        ctx = mp.get_context(start_method)
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        try:
            for _ in range(processes):
                parent, child = ctx.Pipe()
                proc = ctx.Process(  # type: ignore[attr-defined]
                    target=_worker_main, args=(child, factory, gc_off), daemon=True)
                proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
            self.collect("ready", timeout_s=START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def collect(self, expected: str, timeout_s: float | None = None) -> list[Any]:
        """One reply from every worker; a dead or failing worker fails the case."""
        replies: dict[int, Any] = {}
        deadline = time.monotonic() + timeout_s if timeout_s else None
        while len(replies) < len(self.conns):
            pending = [c for i, c in enumerate(self.conns) if i not in replies]
            for ready in wait(pending, timeout=0.2):
                conn = cast(Connection, ready)
                i = self.conns.index(conn)
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):  # closed, or reset by a killed worker
                    raise self._died(i) from None
                if kind == "error":
                    raise CaseFailed(f"worker process {i + 1} failed: {payload}")
                if kind != expected:
                    raise CaseFailed(f"worker process {i + 1} said {kind!r}, "
                                     f"expected {expected!r}")
                replies[i] = payload
            for i, proc in enumerate(self.procs):
                if i not in replies and not proc.is_alive():
                    conn = self.conns[i]
                    if not conn.poll():
                        raise self._died(i)
            if deadline and time.monotonic() > deadline:
                raise CaseFailed(f"worker processes did not answer within {timeout_s:.0f} s")
        return [replies[i] for i in range(len(self.conns))]

    def _died(self, i: int) -> CaseFailed:
        proc = self.procs[i]
        proc.join(timeout=1)
        return CaseFailed(f"worker process {i + 1} (pid {proc.pid}) died "
                          f"(exit code {proc.exitcode})")

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        for i, (conn, share) in enumerate(zip(self.conns, split(args, self.workers),
                                              strict=True)):
            try:
                conn.send(("run", list(share), every, rng.randrange(2**31)))
            except OSError:  # BrokenPipeError: the worker is gone
                raise self._died(i) from None
        self.collect("prepared", timeout_s=START_TIMEOUT_S)
        return _ProcessPrepared(self)

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.send(("stop",))
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=2)
        for conn in self.conns:
            conn.close()
        self.conns, self.procs = [], []
