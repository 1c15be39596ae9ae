"""One case's path to its database: direct, or through a managed Toxiproxy that adds
the asked round-trip time, measured on the live path before the case.

The measurement is a trivial request (`SELECT 1`, Tarantool's ping) on one connection
through the proxy: its median latency without the delay, then with it; the added RTT
recorded is their difference, never the setting. The same request on a direct
connection gives the proxy's own cost (proxy without delay minus direct).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from dbstand.errors import UserError
from dbstand.network.rtt import RttPath
from dbstand.network.toxiproxy import HOST, ManagedToxiproxy, ToxiproxyAPI
from dbstand.probes.cpu import TreeCpu
from dbstand.targets.kinds import get_kind
from dbstand.targets.managed import password_for
from dbstand.targets.url import Route, TargetURL

PROXY_NAME = "db"
PINGS = 400
ROUNDS = 8
WARM_PINGS = 10


class Pinger(Protocol):
    """A connection able to send one trivial request and wait for its answer."""

    def ping(self) -> None: ...

    def close(self) -> None: ...


OpenPinger = Callable[[TargetURL], Pinger]


def check_networked(target: TargetURL, option: str = "--db-rtt") -> None:
    """An embedded database has no network to delay: one clear line."""
    kind = get_kind(target.kind)
    if kind.embedded:
        raise UserError(f"{option}: {target.redacted()} is an embedded {kind.title} "
                        "database, with no network between client and database")


def trivial_latency_us(pinger: Pinger, count: int = PINGS) -> float:
    """The median latency of `count` trivial requests, after a few uncounted ones."""
    for _ in range(WARM_PINGS):
        pinger.ping()
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        pinger.ping()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


class ProxyProbe:
    """The proxy's CPU and the round trips it carried, around the engine's timed
    windows (the engine's Probe protocol)."""

    def __init__(self, pid: int, api_host: str, api_port: int, proxy: str = PROXY_NAME):
        self.tree = TreeCpu(pid)
        self.api = ToxiproxyAPI(api_port, api_host)
        self.proxy = proxy
        self.windows = 0
        self.turns = 0
        self._turns0 = 0

    def begin(self) -> None:
        self._turns0 = self.api.turns(self.proxy)
        self.tree.begin()

    def end(self) -> None:
        self.tree.end()
        self.turns += self.api.turns(self.proxy) - self._turns0
        self.windows += 1

    def result(self, ops: int) -> dict[str, Any]:
        """Per operation: the proxy's CPU and its request-then-answer turns (the round
        trips of a client that waits for each answer)."""
        if not ops:
            return {}
        return {"proxy_cpu_s": round(self.tree.cpu_s, 6),
                "proxy_cpu_us_per_op": round(self.tree.cpu_s / ops * 1e6, 3),
                "round_trips_per_op": round(self.turns / ops, 3)}


def proxy_probe(target: TargetURL) -> ProxyProbe | None:
    """A probe of the proxy a routed target goes through; None on the direct path."""
    route = target.route
    return None if route is None else ProxyProbe(route.proxy_pid, route.api_host,
                                                 route.api_port, route.proxy)


@dataclass
class RoutedPath:
    """Where a case connects (`target`) and what was measured of its path."""

    path: RttPath
    target: TargetURL
    measured: dict[str, Any] = field(default_factory=dict)

    def record(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The case record's `network` object."""
        return path_record("db_rtt", self.path, self.measured, extra)


def path_record(param: str, path: RttPath, measured: dict[str, Any],
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record's `network` (param db_rtt) or `app_network` (app_rtt) object."""
    return {param: path.label, "asked_rtt_ms": _ms(path.rtt_us), **measured,
            **(extra or {})}


def _ms(micros: int | float | None) -> float | None:
    return None if micros is None else round(micros / 1000, 4)


@dataclass
class Proxied:
    """A Toxiproxy of one case in front of `upstream`: where to connect instead
    (`host`, `port`), the proxy's process and API, and what was measured."""

    host: str
    port: int
    pid: int
    api_port: int
    measured: dict[str, Any]


@contextmanager
def delayed(upstream: str, path: RttPath, direct: Callable[[], Pinger],
            via: Callable[[str, int], Pinger], *, host: str = HOST) -> Iterator[Proxied]:
    """A Toxiproxy of its own (started here, stopped on the way out) forwarding `host`:
    a free port to `upstream` ("host:port") with `path`'s delay, the added RTT measured
    before anything else uses it: `direct()` opens a pinger to the upstream itself,
    `via(host, port)` one through the proxy."""
    with ManagedToxiproxy(settings={"host": host}) as record:
        api = ToxiproxyAPI(record.port, host)
        port = api.create_proxy(PROXY_NAME, upstream, f"{host}:0")
        measured = measure_path(api, path, direct, lambda: via(host, port))
        measured["proxy"] = record.settings["server"]
        yield Proxied(host, port, record.pid, record.port, measured)


@contextmanager
def routed(target: TargetURL, path: RttPath, open_pinger: OpenPinger, *,
           host: str = HOST) -> Iterator[RoutedPath]:
    """The case's path: the target itself when direct, else a routed copy whose host
    and port are a Toxiproxy of its own."""
    if path.rtt_us is None:
        yield RoutedPath(path, target, {"path": "direct"})
        return
    check_networked(target)
    kind = get_kind(target.kind)
    upstream = f"{target.host or HOST}:{target.port or kind.default_port}"
    password = target.password or password_for(target)

    def through(proxy_host: str, port: int) -> TargetURL:
        return replace(target, host=proxy_host, port=port, password=password)

    with delayed(upstream, path, lambda: open_pinger(target),
                 lambda h, p: open_pinger(through(h, p)), host=host) as proxied:
        via = replace(through(proxied.host, proxied.port), route=Route(
            target, proxied.pid, path.label, proxied.host, proxied.api_port, PROXY_NAME))
        yield RoutedPath(path, via, proxied.measured)


def measure_path(api: ToxiproxyAPI, path: RttPath, direct: Callable[[], Pinger],
                 via: Callable[[], Pinger]) -> dict[str, Any]:
    """The delay set on the proxy, and the added RTT measured around setting it.

    The delay is switched off and on `ROUNDS` times on one connection; each round's
    medians give one difference, and the record keeps the median difference, so a
    burst of load on a shared machine moves one round, not the figure.
    """
    request_us, answer_us = path.split_us()
    first = direct()
    try:
        direct_us = trivial_latency_us(first)
    finally:
        first.close()
    bare: list[float] = []
    delayed: list[float] = []
    pinger = via()
    try:
        for _ in range(ROUNDS):
            api.set_delay(PROXY_NAME, 0, 0)
            bare.append(trivial_latency_us(pinger, PINGS // ROUNDS))
            api.set_delay(PROXY_NAME, request_us, answer_us)
            delayed.append(trivial_latency_us(pinger, PINGS // ROUNDS))
    finally:
        pinger.close()
    added = statistics.median(d - b for d, b in zip(delayed, bare, strict=True))
    bare_us, delayed_us = statistics.median(bare), statistics.median(delayed)
    return {
        "path": "Toxiproxy",
        "delay_us": {"request": request_us, "answer": answer_us},
        "trivial_request_us": {"direct": round(direct_us, 1),
                               "proxy_no_delay": round(bare_us, 1),
                               "proxy_delayed": round(delayed_us, 1)},
        "measured_rtt_ms": _ms(added),
        "measured_rounds_ms": [_ms(d - b) for d, b in zip(delayed, bare, strict=True)],
        "proxy_own_ms": _ms(bare_us - direct_us),
        "measured_how": (f"{ROUNDS} rounds of {PINGS // ROUNDS} trivial requests on one "
                         "connection through the proxy, without then with the delay: the "
                         "median of the rounds' differences of medians"),
    }
