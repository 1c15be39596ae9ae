"""An open connection to a Dask cluster and the workers dbstand loads from.

Opening a session starts (`local:N`) or joins (`tcp://`, `tls://`) a cluster, picks
its workers, and learns of each one its host, process id and clock offset from this
process (the midpoint of the shortest of a few round trips, as NTP does), so a start
time broadcast ahead lands at the same moment everywhere. Waiting on the workers'
answers goes through `gather`, which watches the scheduler's list of workers: a
worker that died, left or was replaced fails the case at once, named, and nothing of
the others' answers is kept.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from dbstand import interrupts
from dbstand.distributed.spec import DEFAULT_PORT, ClusterSpec
from dbstand.errors import CaseFailed, UserError

#: Settings for the scheduler and workers dbstand starts itself (local:N): a quieter
#: idle cluster (the profiler and fast admin ticks cost ~10% of a core between runs),
#: and a task whose worker dies is never run again elsewhere: the case fails instead.
LOCAL_SETTINGS: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.allowed-failures": 0,
}
CLOCK_ROUNDS = 3
#: how long a listed worker may take to answer who it is between cases
ANSWER_TIMEOUT = "5s"
POLL_S = 0.25
#: seconds to leave the cluster (and stop a local one) when the run ends or is stopped
CLOSE_TIMEOUT_S = 5

T = TypeVar("T")


class ClusterError(UserError):
    """The cluster cannot be used: no scheduler, too few workers, dbstand missing there."""


class WorkerFailed(CaseFailed, UserError):
    """A worker died, left, or failed its share: the case fails (printed as one line by
    the CLI, recorded as a failed case by `dbstand run`)."""


@dataclass(frozen=True)
class WorkerInfo:
    """One worker as dbstand uses it."""

    address: str
    name: str
    host: str
    pid: int
    clock_offset_s: float
    """Its wall clock minus ours (positive: it is ahead)."""
    rtt_s: float
    """The round trip the offset was measured over (its uncertainty is half of it)."""

    def describe(self) -> str:
        return f"worker {self.name} ({self.host}, pid {self.pid}, {self.address})"

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "address": self.address, "host": self.host,
                "pid": self.pid, "clock_offset_ms": round(self.clock_offset_s * 1e3, 3),
                "clock_rtt_ms": round(self.rtt_s * 1e3, 3)}


class _Pending(Protocol):
    """A Dask future or an actor call's future."""

    def done(self) -> bool: ...

    def result(self, timeout: Any = None) -> Any: ...


def whoami() -> dict[str, Any]:
    """Runs on each worker: who it is, and proof it can import dbstand's load engine
    (a worker host without dbstand fails here, before any load)."""
    from dbstand.engine.histogram import LatencyHistogram
    from dbstand.loadgen import engine

    engine._native()
    LatencyHistogram()
    return {"host": socket.gethostname(), "pid": os.getpid()}


def wall_clock() -> float:
    return time.time()


class ClusterSession:
    """A Dask client plus the workers of this run (use as a context manager)."""

    def __init__(self, spec: ClusterSpec, client: Any, cluster: Any = None):
        self.spec = spec
        self.client = client
        self._cluster = cluster
        self.workers: list[WorkerInfo] = []
        self.notes: list[str] = []

    def _listed(self) -> dict[str, Any]:
        """The scheduler's workers, by address, asked now. Not `Client.scheduler_info`:
        it returns the client's cached identity, which the client's own periodic update
        replaces (every 2 s) with one that lists no workers, so a call that ran beside
        that update read an empty cluster ("worker 0 left the cluster" in a make test;
        with the update every 2 ms, 403 of 2,000 calls here)."""
        identity = self.client.sync(self.client.scheduler.identity, n_workers=-1)
        return dict(identity["workers"])

    # --- opening ----------------------------------------------------------------
    def _pick_workers(self, wanted: int | None, stale: frozenset[str] = frozenset()
                      ) -> list[str]:
        info = self._listed()
        if stale:  # still listed, but gone: wait for as many others (a nanny's restart)
            assert wanted
            deadline = time.monotonic() + self.spec.timeout_s
            while len(set(info) - stale) < wanted:
                if time.monotonic() > deadline:
                    raise ClusterError(f"cluster {self.spec.label}: {len(set(info) - stale)} "
                                       f"live worker(s) after {self.spec.timeout_s:g} s, "
                                       f"{wanted} wanted")
                time.sleep(0.1)
                info = self._listed()
            info = {a: w for a, w in info.items() if a not in stale}
        elif wanted:
            try:
                self.client.wait_for_workers(wanted, timeout=self.spec.timeout_s)
            except TimeoutError:
                have = len(self._listed())
                raise ClusterError(f"cluster {self.spec.label}: {have} worker(s) after "
                                   f"{self.spec.timeout_s:g} s, {wanted} wanted") from None
            info = self._listed()
        if not info:
            raise ClusterError(f"cluster {self.spec.label} has no workers (start some with "
                               "`dask worker SCHEDULER`)")
        # a stable order: by name, then address (names are unique in a cluster)
        ordered = sorted(info, key=lambda a: (str(info[a].get("name", a)), a))
        return ordered[:wanted] if wanted else ordered

    def _identify(self, addresses: list[str]) -> None:
        info = self._listed()
        try:
            who = self.client.run(whoami, workers=addresses)
        except Exception as exc:
            raise ClusterError(f"cluster {self.spec.label}: a worker cannot run dbstand's "
                               f"load engine ({type(exc).__name__}: {exc}); install the same "
                               "dbstand on every worker host") from None
        workers = []
        for address in addresses:
            best: tuple[float, float] | None = None
            for _ in range(CLOCK_ROUNDS):
                t0 = time.time()
                theirs = self.client.run(wall_clock, workers=[address])[address]
                t1 = time.time()
                if best is None or t1 - t0 < best[1]:
                    best = (theirs - (t0 + t1) / 2, t1 - t0)
            assert best is not None
            workers.append(WorkerInfo(address, str(info[address].get("name", address)),
                                      str(who[address]["host"]), int(who[address]["pid"]),
                                      best[0], best[1]))
        self.workers = workers

    # --- use ----------------------------------------------------------------------
    def present(self) -> set[str]:
        """Addresses of the workers the scheduler knows now."""
        return set(self._listed())

    def refresh(self) -> None:
        """Between cases: if a worker died (and its nanny started a new one, or another
        joined), pick the cluster's workers afresh, as many as before, so one lost
        worker fails its case and not every case after it. A worker is gone when the
        scheduler no longer lists it, or when it no longer answers as the process this
        session identified: the scheduler lists a killed worker until it notices the
        loss, and a case started in that gap failed on it (make test, 2026-11-27)."""
        present = self.present()
        stale = frozenset(w.address for w in self.workers
                          if w.address not in present or not self._answers_as(w))
        if stale:
            self._identify(self._pick_workers(len(self.workers), stale))

    def _answers_as(self, worker: WorkerInfo) -> bool:
        """Whether the process at the worker's address is still the one identified (a
        dead one refuses at once, but Dask retries a refused connection for its whole
        connect timeout, 30 s by default: here ANSWER_TIMEOUT)."""
        import dask

        try:
            with dask.config.set({"distributed.comm.timeouts.connect": ANSWER_TIMEOUT}):
                answer = self.client.run(whoami, workers=[worker.address])
        except Exception:
            return False
        return int(answer.get(worker.address, {}).get("pid", -1)) == worker.pid

    def check_alive(self) -> None:
        """Fail, naming it, if any worker of this session is gone."""
        present = self.present()
        for worker in self.workers:
            if worker.address not in present:
                raise WorkerFailed(f"{worker.describe()} left the cluster (died or was "
                                   "restarted): the case is not reported from the others")

    def gather(self, pending: Mapping[WorkerInfo, _Pending], what: str,
               deadline_s: float | None = None,
               on_error: Callable[[WorkerInfo, BaseException], str] | None = None
               ) -> dict[WorkerInfo, Any]:
        """Every worker's answer, or WorkerFailed naming the first worker that failed,
        left the cluster, or (with `deadline_s`) had not answered by then."""
        results: dict[WorkerInfo, Any] = {}
        deadline = time.monotonic() + deadline_s if deadline_s is not None else None
        next_check = time.monotonic() + POLL_S
        while len(results) < len(pending):
            interrupts.check()  # a Ctrl-C whose exception was lost still stops the run
            for worker, future in pending.items():
                if worker in results or not future.done():
                    continue
                try:
                    results[worker] = future.result()
                except Exception as exc:
                    detail = on_error(worker, exc) if on_error else _error_text(exc)
                    raise WorkerFailed(f"{worker.describe()} failed {what}: {detail}") from None
            if len(results) == len(pending):
                break
            if time.monotonic() >= next_check:
                self.check_alive()
                next_check = time.monotonic() + POLL_S
            if deadline is not None and time.monotonic() > deadline:
                late = [w.describe() for w in pending if w not in results]
                raise WorkerFailed(f"no answer from {', '.join(late)} for {what} within "
                                   f"{deadline_s:.0f} s")
            time.sleep(0.005)
        return results

    def submit_each(self, fn: Callable[..., T], args_of: Callable[[WorkerInfo], tuple],
                    **kwargs: Any) -> dict[WorkerInfo, Any]:
        """One task per worker, pinned to it (never moved to another), never merged with
        an identical task (`pure=False`)."""
        return {w: self.client.submit(fn, *args_of(w), workers=[w.address],
                                      allow_other_workers=False, pure=False, **kwargs)
                for w in self.workers}

    def record(self) -> dict[str, Any]:
        return {"spec": self.spec.label, "workers": len(self.workers),
                "scheduler": self.client.scheduler.address}

    def close(self) -> None:
        """Leave the cluster (and stop a local one) within CLOSE_TIMEOUT_S, also when
        a task still runs on it (a Ctrl-C mid-case)."""
        with contextlib.suppress(Exception):
            self.client.close(timeout=CLOSE_TIMEOUT_S)
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close(timeout=CLOSE_TIMEOUT_S)
        self._cluster = None

    def __enter__(self) -> ClusterSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _security(spec: ClusterSpec) -> Any:
    import dask
    from distributed.security import Security

    if spec.tls_ca:
        return Security(tls_ca_file=spec.tls_ca, tls_client_cert=spec.tls_cert,
                        tls_client_key=spec.tls_key, require_encryption=True)
    security = Security()  # Dask's config: distributed.comm.tls.*, require-encryption
    if spec.uses_tls and not (dask.config.get("distributed.comm.tls.ca-file", None)
                              and dask.config.get("distributed.comm.tls.client.cert", None)):
        raise ClusterError(f"{spec.address}: TLS needs a CA and a client certificate: add "
                           "?ca=FILE&cert=FILE&key=FILE, or set distributed.comm.tls.ca-file "
                           "and distributed.comm.tls.client.cert/key in Dask's config")
    return security


def _start_local(spec: ClusterSpec) -> tuple[Any, Any]:
    import dask
    from distributed import Client, LocalCluster

    assert spec.workers
    # The workers' processes ignore SIGINT (inherited): a Ctrl-C at the terminal
    # reaches the whole process group, and only dbstand should act on it (stopping
    # the cluster), not every worker with a traceback of its own.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = _local_cluster(spec, LocalCluster, dask)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        client = Client(cluster, set_as_default=False)
    except BaseException:
        cluster.close(timeout=CLOSE_TIMEOUT_S)
        raise
    return client, cluster


def _local_cluster(spec: ClusterSpec, local_cluster: Any, dask: Any) -> Any:
    with dask.config.set(LOCAL_SETTINGS):
        return local_cluster(
            n_workers=spec.workers, threads_per_worker=1, processes=True,
            host="127.0.0.1", protocol="tcp://",
            dashboard_address="127.0.0.1:0",  # loopback only, on a free port
            worker_dashboard_address=None, silence_logs=logging.CRITICAL)


def _probe(spec: ClusterSpec) -> None:
    """Fail fast when nothing listens at the scheduler's address (Dask's Client would
    retry for the whole `timeout`): refused is refused at once."""
    from urllib.parse import urlsplit

    parts = urlsplit(spec.address or "")
    if not parts.hostname:
        return
    limit = min(spec.timeout_s, 5.0)
    try:
        socket.create_connection((parts.hostname, parts.port or DEFAULT_PORT),
                                 timeout=limit).close()
    except ConnectionRefusedError:
        raise ClusterError(f"cannot reach the Dask scheduler at {spec.address}: connection "
                           "refused (no scheduler listens there)") from None
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {spec.address}: "
                           f"{exc.strerror or 'no answer'} within {limit:g} s (the "
                           "address's ?timeout=S sets how long to wait)") from None


def _connect(spec: ClusterSpec) -> Any:
    from distributed import Client

    _probe(spec)
    security = _security(spec)
    try:
        return Client(spec.address, security=security, timeout=spec.timeout_s,
                      set_as_default=False)
    except (OSError, TimeoutError, TypeError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {spec.address}: "
                           f"{_error_text(exc)}") from None


def open_cluster(spec: ClusterSpec) -> ClusterSession:
    """Start or join the cluster of `spec` and learn its workers (see module doc)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ClusterError("--cluster needs Dask: pip install 'dbstand[distributed]'") from None
    if spec.kind == "local":
        client, cluster = _start_local(spec)
    else:
        client, cluster = _connect(spec), None
    session = ClusterSession(spec, client, cluster)
    try:
        session._identify(session._pick_workers(spec.workers))
        if spec.kind == "remote" and not spec.uses_tls and not spec.on_loopback:
            session.notes.append(
                f"{spec.address} is plain TCP: whoever reaches the scheduler can run code "
                "on it and on every worker; use tls:// unless the network is trusted")
    except BaseException:
        session.close()
        raise
    return session


@contextlib.contextmanager
def cluster_session(text: str) -> Iterator[ClusterSession]:
    """`with cluster_session("local:2") as session:` (parses, opens, always closes)."""
    from dbstand.distributed.spec import parse_cluster

    session = open_cluster(parse_cluster(text))
    try:
        yield session
    finally:
        session.close()
