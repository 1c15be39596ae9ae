"""Run the native engine: closed loop, open loop, or scenario.

The engine runs in native threads with the GIL released, so the Python process
stays responsive (Ctrl-C stops a run within about 100 ms) and Python threads
(a progress bar, a test server) keep running meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from dbstand.loadgen.errors import (
    EngineMissingError,
    LoadgenConfigError,
    TargetUnreachableError,
)
from dbstand.loadgen.result import LoadResult, Mode
from dbstand.loadgen.scenario import Scenario
from dbstand.loadgen.series import DEFAULT_INTERVAL_S
from dbstand.loadgen.tls import TlsSettings

DEFAULT_TIMEOUT_S = 10.0

Headers = Mapping[str, str] | Sequence[tuple[str, str]]


#: read by the engine's io_uring loop when it starts a run (native/loadgen/src/uring.rs)
BATCH_WAIT_VAR = "DBSTAND_LOADGEN_BATCH_US"


@contextlib.contextmanager
def no_batch_wait() -> Iterator[None]:
    """Runs started inside the block wake for every answer instead of letting the kernel
    hold answers back to batch them. The batching saves the generator CPU when it has a
    CPU of its own; on a CPU it shares with the server it only delays answers (measured
    against nginx on one CPU: 20-35% fewer requests/s than wrk at 1 and 4 connections
    with it, at or above wrk without it)."""
    before = os.environ.get(BATCH_WAIT_VAR)
    os.environ[BATCH_WAIT_VAR] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(BATCH_WAIT_VAR, None)
        else:
            os.environ[BATCH_WAIT_VAR] = before


def _native() -> Any:
    try:
        from dbstand import _loadgen
    except ImportError as e:  # pragma: no cover - depends on how dbstand was installed
        raise EngineMissingError(
            f"dbstand's native HTTP engine is not built ({e}); reinstall with `pip install .`"
        ) from None
    return _loadgen


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _header_list(headers: Headers | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k), str(v)) for k, v in items]


def _request(method: str, headers: Headers | None, body: bytes | str) -> dict[str, Any]:
    """The one request closed and open loops repeat, in the types the native engine
    takes (a header list, body bytes)."""
    return {"method": method, "headers": _header_list(headers),
            "body": body.encode() if isinstance(body, str) else bytes(body)}


def _run(mode: Mode, url: str, *, connections: int, keepalive: bool, timeout_s: float,
         rate: float | None = None, tls: TlsSettings | None = None,
         **kwargs: Any) -> LoadResult:
    native = _native()
    kwargs.update((tls or TlsSettings()).native_kwargs())
    before = _cpu_self()
    try:
        raw = native.run(url, connections=connections, keepalive=keepalive, timeout=timeout_s,
                         rate=rate, **kwargs)
    except KeyboardInterrupt as e:
        # the engine stopped at once: what it measured until then goes with the
        # exception (`partial`), for a caller that records interrupted runs
        raw = getattr(e, "report", None)
        if isinstance(raw, dict):
            e.partial = replace(  # type: ignore[attr-defined]
                LoadResult.from_native(raw, mode=mode, url=url, keepalive=keepalive,
                                       timeout_s=timeout_s, rate=rate),
                process_cpu_s=_cpu_self() - before)
        raise
    except ConnectionError as e:
        raise TargetUnreachableError(str(e)) from None
    except (ValueError, OverflowError, TypeError) as e:
        raise LoadgenConfigError(str(e)) from None
    cpu = _cpu_self() - before
    result = LoadResult.from_native(raw, mode=mode, url=url, keepalive=keepalive,
                                    timeout_s=timeout_s, rate=rate,
                                    http2=bool(kwargs.get("http2")),
                                    streams=int(kwargs.get("streams", 1)))
    return replace(result, process_cpu_s=cpu)


def run_closed(
    url: str,
    connections: int,
    requests: int | None = None,
    duration: float | None = None,
    *,
    keepalive: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    threads: int | None = None,
    method: str = "GET",
    headers: Headers | None = None,
    body: bytes | str = b"",
    interval_s: float = DEFAULT_INTERVAL_S,
    tls: TlsSettings | None = None,
    http2: bool = False,
    streams: int = 1,
    max_failures: int | None = None,
    min_duration_s: float | None = None,
) -> LoadResult:
    """Closed loop (ab/wrk): each connection sends its next request when the
    previous answer is in. Stops after `requests` in total or `duration` seconds,
    whichever comes first; requests in flight at the deadline are waited for as long
    as twice the run's slowest answer (at least half a second, at most the request
    timeout), then counted as timeouts (so `duration` bounds the run).
    `min_duration_s` (a run by `requests`): go on sending past the count until that
    many seconds after the start; every request sent is answered.
    `timeout_s=0` disables the request timeout; `threads` defaults to half the
    cores (at least 1, at most the connections), the cheapest per request measured.
    `interval_s`: width of the time series' intervals (`result.series`; 0: none).
    `tls`: how `https://` connections are set up (default: verified, resumed).
    `http2`: speak HTTP/2 (ALPN h2 on https://, h2c with prior knowledge on
    http://) with `streams` requests in flight per connection, as h2load -m.
    `max_failures`: the run stops as soon as more requests than this have failed
    (not 2xx, socket errors, timeouts), as k6's abortOnFail: a run that can no longer
    pass ends at once; `result.failures_exceeded` says so."""
    return _run("closed", url, connections=connections, keepalive=keepalive,
                timeout_s=timeout_s, requests=requests, duration=duration, threads=threads,
                interval=interval_s, tls=tls, http2=http2, streams=streams,
                max_failures=max_failures, min_duration=min_duration_s,
                **_request(method, headers, body))


def run_open(
    url: str,
    rate: float,
    duration: float,
    connections: int,
    *,
    keepalive: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    threads: int | None = None,
    method: str = "GET",
    headers: Headers | None = None,
    body: bytes | str = b"",
    interval_s: float = DEFAULT_INTERVAL_S,
    tls: TlsSettings | None = None,
) -> LoadResult:
    """Open loop (wrk2): `rate` requests/s in total, spread evenly over the
    connections, for `duration` seconds. Latency counts from each request's
    intended send time, so a server stall shows in every request it delayed
    (coordinated omission corrected). A connection still busy when its next
    send is due sends late, and that lateness is part of the latency."""
    return _run("open", url, connections=connections, keepalive=keepalive,
                timeout_s=timeout_s, rate=rate, duration=duration, threads=threads,
                interval=interval_s, tls=tls, **_request(method, headers, body))


def run_scenario(
    url: str,
    scenario: Scenario,
    users: int,
    iterations: int | None = None,
    duration: float | None = None,
    *,
    keepalive: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    threads: int | None = None,
    interval_s: float = DEFAULT_INTERVAL_S,
    rate: float | None = None,
    tls: TlsSettings | None = None,
) -> LoadResult:
    """Scenario: `users` virtual users, one connection each, run the steps in order,
    `iterations` times in total or for `duration` seconds; closed loop, or with
    `rate` open loop (iterations started per second in total, at fixed intended
    times; iteration latency from the intended start; needs `duration`).
    `url` gives host and port; step paths are relative to it. Each step gets its
    own histogram in `result.steps`; whole iterations in `iterations_histogram`."""
    return _run("scenario", url, connections=users, keepalive=keepalive,
                timeout_s=timeout_s, requests=iterations, duration=duration,
                threads=threads, scenario=scenario.to_json(), interval=interval_s,
                rate=rate, tls=tls)
