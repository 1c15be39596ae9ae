"""An in-process workload's clients spread over Dask workers (`run kv --cluster`).

The case runs as it does on one machine (table made, filled, checked and restored by
this process's own connection; the engine's calibration, warm-up and stop rule
unchanged); only the executor differs. `ClusterExecutor` gives each worker its share
of the mode's clients (threads:8 over 2 workers: threads:4 on each; asyncio:N the
same) as a Dask actor that keeps its connections open for the whole case. Each
iteration's arguments are dealt out as one process deals them to its clients, every
worker starts at one moment broadcast a little ahead, and the iteration lasts from
that moment to the last worker's end. The workers' HDR histograms reach the engine
unmerged, and it merges them by adding counts, as it does for processes:P.

A worker that dies, leaves, starts late or fails an operation fails the case, named.
"""

from __future__ import annotations

import contextlib
import gc
import random
import resource
import socket
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from dbstand.distributed.httpload import MAX_LATE_S, MERGE_NOTE, wait_until
from dbstand.distributed.session import ClusterSession, WorkerInfo
from dbstand.distributed.shares import deal, even
from dbstand.engine.executor import Executor, IterationResult, Prepared
from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.loops import clock
from dbstand.errors import UserError
from dbstand.modes.spec import ModeSpec

if TYPE_CHECKING:
    from rich.console import Console

START_LEAD_S = 0.05
"""How far ahead each iteration's common start is set (untimed)."""


class ShareRecipe(Protocol):
    """What a worker needs to open its share of a case's clients (pickled to it): the
    workload's own executor for that share (the kv workload's: workloads/kv/cluster.py)."""

    @property
    def mode(self) -> ModeSpec:
        """The whole mode; `share()` gives one worker's part of it."""

    @property
    def gc_off(self) -> bool:
        """The collector off while timed, as in every mode."""

    def share(self, mode: ModeSpec) -> ShareRecipe:
        """The same recipe for one worker's share of the clients (threads:k, ...)."""

    def build(self) -> Executor:
        """The workload's executor for this share, connections open."""

    def destination(self) -> tuple[str, int] | None:
        """The database's host and port its connections go to (None: no network, an
        embedded database), to record each worker's source address."""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def source_addresses(destination: tuple[str, int] | None) -> list[str] | None:
    """The local addresses of this process's open TCP connections to `destination`, as
    the kernel reports them (read, not computed from routes): where a worker's traffic
    to the database comes from. None without a destination or where it cannot be read."""
    if destination is None:
        return None
    import psutil

    host, port = destination
    try:
        wanted = {info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
        conns = psutil.Process().net_connections(kind="tcp")
    except (OSError, psutil.Error):
        return None
    return sorted({c.laddr.ip for c in conns
                   if c.raddr and c.raddr.port == port and c.raddr.ip in wanted})


class ShareActor:
    """Lives on one worker for one case (a Dask actor): its clients' connections stay
    open across iterations. Every method runs in the worker's one actor thread, so the
    connections are made and used in the same thread."""

    def __init__(self, recipe: ShareRecipe):
        self.recipe = recipe
        self.executor: Executor | None = None
        self.prepared: Prepared | None = None

    def open(self) -> list[str] | None:
        """Open the share's connections; their source addresses (`source_addresses`)."""
        self.executor = self.recipe.build()
        return source_addresses(self.recipe.destination())

    def prepare(self, share: list[Any], every: int, seed: int) -> int:
        """Build the plan, then collect garbage now, untimed: a worker's heap (Dask's
        own objects) takes tens of ms to collect, far too long for the timed window."""
        assert self.executor is not None
        self.prepared = self.executor.prepare(share, every, random.Random(seed))
        if self.recipe.gc_off:
            gc.collect()
        return len(share)

    def run(self, start_wall: float) -> dict[str, Any]:
        """Wait for the common start, run the prepared share, return its figures; the
        elapsed time counts from the common start (a late start is part of it)."""
        assert self.prepared is not None
        late = wait_until(start_wall)
        if late > MAX_LATE_S:
            raise RuntimeError(f"started {late * 1e3:.0f} ms after the common start (more "
                               f"than {MAX_LATE_S * 1e3:.0f} ms): clocks not synchronised, "
                               "or the worker was busy")
        started = clock() - int(late * 1e9)
        cpu = _cpu()
        paused = self.recipe.gc_off and gc.isenabled()
        if paused:  # collected in prepare(); off while timed, as in every mode
            gc.disable()
        try:
            result = self.prepared.execute()
        finally:
            if paused:
                gc.enable()
        end = clock()
        cpu = _cpu() - cpu
        self.prepared = None
        hist = LatencyHistogram()
        hist.record_many(result.samples)
        for h in result.histograms:
            hist.merge(h)
        return {"elapsed_ns": end - started, "ops": result.ops_done, "late_s": late,
                "cpu_s": cpu, "hist": hist.encode() if hist.count else None}

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()
            self.executor = None


class _ClusterPrepared(Prepared):
    def __init__(self, owner: ClusterExecutor):
        self.owner = owner

    def execute(self) -> IterationResult:
        return self.owner._run_iteration()


class ClusterExecutor(Executor):
    """The mode's clients spread over the session's workers (see module doc)."""

    def __init__(self, session: ClusterSession, recipe: ShareRecipe, mode: ModeSpec,
                 shares: Sequence[int]):
        super().__init__()
        self.session = session
        self.mode = mode
        self.shares = list(shares)
        self.workers = sum(self.shares)
        self.timed = (f"operations only (connections opened before the timed window), on "
                      f"{len(self.shares)} cluster workers: from a common start broadcast "
                      "ahead to the last worker's end")
        self.log: list[dict[WorkerInfo, dict[str, Any]]] = []
        self.futures: dict[WorkerInfo, Any] = {}
        self.actors: dict[WorkerInfo, Any] = {}
        self.sources: dict[WorkerInfo, list[str] | None] = {}
        try:
            self._start(recipe)
        except BaseException:
            self.close()
            raise

    def share_mode(self, n: int) -> ModeSpec:
        if self.mode.kind == "sync":
            return self.mode
        return ModeSpec(self.mode.kind, n, self.mode.coroutines, self.mode.shared)

    def _start(self, recipe: ShareRecipe) -> None:
        client = self.session.client
        for worker, n in zip(self.session.workers, self.shares, strict=True):
            mine = recipe.share(self.share_mode(n))
            self.futures[worker] = client.submit(
                ShareActor, mine, actor=True, workers=[worker.address],
                allow_other_workers=False, pure=False)
        self.actors = self.session.gather(self.futures, "to start its share", 120.0)
        self.sources = self._call("to open its connections", 120.0, lambda w, a: a.open())

    def _call(self, what: str, deadline_s: float | None,
              call: Callable[[WorkerInfo, Any], Any]) -> dict[WorkerInfo, Any]:
        """`call(worker, actor)` on every worker at once; every answer, or WorkerFailed."""
        self.session.check_alive()
        with self.session.client.as_current():  # an actor calls through the current client
            pending = {w: call(w, a) for w, a in self.actors.items()}
        return self.session.gather(pending, what, deadline_s)

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        parts = dict(zip(self.session.workers, deal(args, self.shares), strict=True))
        seeds = {w: rng.randrange(2**31) for w in self.session.workers}
        self._call("to prepare an iteration", 120.0,
                   lambda w, a: a.prepare(parts[w], every, seeds[w]))
        return _ClusterPrepared(self)

    def _run_iteration(self) -> IterationResult:
        lead = max(START_LEAD_S, 4 * max(w.rtt_s for w in self.session.workers))
        start = time.time() + lead
        answers = self._call("an iteration", None,
                             lambda w, a: a.run(start + w.clock_offset_s))
        self.log.append(answers)
        hists = [LatencyHistogram.decode(a["hist"]) for a in answers.values() if a["hist"]]
        return IterationResult(max(a["elapsed_ns"] for a in answers.values()),
                               sum(a["ops"] for a in answers.values()), [], hists)

    def report(self, warmup: int) -> dict[str, Any]:
        """Each worker's share and own figures over the measured iterations (warm-up
        ones left out), and the total."""
        measured = self.log[warmup:]
        rows = []
        for worker, n in zip(self.session.workers, self.shares, strict=True):
            mine = [it[worker] for it in measured]
            hist = LatencyHistogram()
            for a in mine:
                if a["hist"]:
                    hist.merge(LatencyHistogram.decode(a["hist"]))
            ops = sum(a["ops"] for a in mine)
            seconds = sum(a["elapsed_ns"] for a in mine) / 1e9
            rows.append({**worker.record(), "share": self.share_mode(n).name, "clients": n,
                         "source_addresses": self.sources.get(worker),
                         "iterations": len(mine), "ops": ops,
                         "ops_per_s": round(ops / seconds, 1) if seconds else 0.0,
                         "cpu_s": round(sum(a["cpu_s"] for a in mine), 3),
                         "max_start_late_ms": round(max((a["late_s"] for a in mine),
                                                        default=0.0) * 1e3, 3),
                         "latency_us": hist.summary_us(),
                         "latency_samples": hist.count})
        return {**self.session.record(), "merge": MERGE_NOTE, "per_worker": rows,
                "total": {"clients": self.workers, "iterations": len(measured),
                          "ops": sum(r["ops"] for r in rows),
                          "latency_samples": sum(r["latency_samples"] for r in rows)},
                "note": "probes' client CPU covers this host's processes only; each "
                        "worker's own CPU is its cpu_s"}

    def close(self) -> None:
        for actor in self.actors.values():
            with contextlib.suppress(Exception), self.session.client.as_current():
                actor.close().result(timeout=30)
        for future in self.futures.values():
            with contextlib.suppress(Exception):
                future.release()
        self.actors, self.futures = {}, {}


def cluster_shares(mode: ModeSpec, workers: int) -> list[int]:
    """Clients per worker for `mode`; refuses modes a cluster cannot share."""
    if mode.kind == "processes":
        raise UserError(f"mode {mode.name} with --cluster: each cluster worker is already "
                        "a process; use threads:N or asyncio:N (split over the workers) and "
                        "start more workers for more processes")
    return even(mode.concurrency, workers, f"mode {mode.name}: its clients")


def print_workers(label: str, report: dict[str, Any], measurement: Any,
                  console: Console) -> None:
    """Each worker's share and own figures for one case, and the case's merged figures."""
    from rich.table import Table

    table = Table(title=f"{label} on cluster {report['spec']}", title_justify="left")
    for name in ("worker", "host", "pid", "share", "ops", "ops/s", "p50 µs", "p99 µs",
                 "max µs", "samples"):
        table.add_column(name, justify="left" if name in ("worker", "host", "share")
                         else "right")

    def us(summary: dict[str, float] | None, key: str) -> str:
        return f"{summary[key]:,.1f}" if summary else "-"

    for w in report["per_worker"]:
        lat = w["latency_us"]
        table.add_row(w["name"], w["host"], str(w["pid"]), w["share"], f"{w['ops']:,}",
                      f"{w['ops_per_s']:,.0f}", us(lat, "p50"), us(lat, "p99"),
                      us(lat, "max"), f"{w['latency_samples']:,}")
    table.add_section()
    merged = measurement.latency.summary_us()
    table.add_row("all (merged)", "", "", f"{report['total']['clients']} clients",
                  f"{report['total']['ops']:,}", f"{measurement.ops_per_s:,.0f}",
                  us(merged, "p50"), us(merged, "p99"), us(merged, "max"),
                  f"{measurement.latency.count:,}")
    console.print(table)
    console.print(MERGE_NOTE + "; ops/s of the whole: the case's figure", style="dim")
