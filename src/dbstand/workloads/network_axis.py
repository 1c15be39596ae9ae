"""The RTT axis on a workload's cases (dbstand/network/): the matrix multiplied by the
asked paths, and each case run on its path.

A case of the axis carries `params["db_rtt"]` ("direct", "0 ms", "0.5 ms"), so
`compare` matches cases on it and the report groups by it. Cases without the option
carry nothing, and run exactly as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dbstand.network.http_ping import HttpPinger
from dbstand.network.route import (
    Pinger,
    ProxyProbe,
    RoutedPath,
    check_networked,
    delayed,
    path_record,
    proxy_probe,
    routed,
)
from dbstand.network.rtt import RttPath, parse_rtts, path_of
from dbstand.network.toxiproxy import HOST, PROGRAM
from dbstand.sql.ownership import DEFAULT_PREFIX
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, CaseOutcome

PARAM = "db_rtt"
APP_PARAM = "app_rtt"
PROXY_KEYS = ("proxy_cpu_s", "proxy_cpu_us_per_op", "round_trips_per_op")


def db_paths(text: str | None, targets: list[TargetURL]) -> list[RttPath]:
    """The paths of `--db-rtt` (none when not given); an embedded target refuses."""
    if text is None:
        return []
    paths = parse_rtts(text, "--db-rtt")
    if any(p.rtt_us is not None for p in paths):
        for target in targets:
            check_networked(target)
        PROGRAM.binary()  # built (once) before the run, not inside its first case
    return paths


def with_paths(cases: list[Case], paths: list[RttPath], param: str = PARAM) -> list[Case]:
    """Each case once per path, path by path (a path's cases run together); `param`:
    the database axis (db_rtt) or the generator -> stack one (app_rtt)."""
    if not paths:
        return cases
    return [dataclasses.replace(case, params={**case.params, param: path.label})
            for path in paths for case in cases]


def _open_pinger(target: TargetURL, prefix: str) -> Pinger:
    """The kind's own pinger (`targets/<kind>/ping.py`) if it has one, else its admin
    connection (workloads/admin.py): SELECT 1 or Tarantool's ping."""
    import importlib

    try:
        module = importlib.import_module(f"dbstand.targets.{target.kind}.ping")
    except ModuleNotFoundError:
        from dbstand.workloads.admin import admin_client

        pinger: Pinger = admin_client(target, prefix)
        return pinger
    found: Pinger = module.open_pinger(target)
    return found


@contextmanager
def case_on_path(case: Case) -> Iterator[tuple[Case, RoutedPath | None]]:
    """The case as it runs (its target routed through the proxy when an RTT is asked)
    and its path; the case itself when the axis is not used."""
    label = case.params.get(PARAM)
    if label is None:
        yield case, None
        return
    prefix = str(case.params.get("prefix", DEFAULT_PREFIX))
    with routed(case.target, path_of(label),
                lambda target: _open_pinger(target, prefix)) as path:
        yield dataclasses.replace(case, target=path.target), path


def add_network(outcome: CaseOutcome, path: RoutedPath | None) -> None:
    """The record's `network` object: the path as asked and measured, with what the
    workload's proxy probe saw in the timed windows (`metrics["proxy"]`, or its
    `probes`): the proxy's CPU and its round trips per operation."""
    if path is None:
        return
    seen = outcome.metrics.pop("proxy", None)
    probes = outcome.metrics.get("probes")
    if seen is None and isinstance(probes, dict):
        seen = {k: probes[k] for k in PROXY_KEYS if k in probes}
    outcome.metrics["network"] = path.record(seen)


def path_lines(records: list[dict[str, Any]], per: str = "operation") -> list[str]:
    """One line per path with a proxy, for a report's notes: the RTT asked and measured
    (medians over the path's cases), the proxy's own cost, and its CPU per `per`; the
    database paths (`network`), then the generator -> stack ones (`app_network`)."""
    return _lines(records, per, "network", PARAM, "path") + \
        _lines(records, per, "app_network", APP_PARAM, "generator -> stack path")


def _lines(records: list[dict[str, Any]], per: str, key: str, param: str,
           what: str) -> list[str]:
    nets: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        net = r.get(key)
        if r.get("status") == "ok" and isinstance(net, dict) and net.get("path") != "direct":
            nets.setdefault(str(net.get(param)), []).append(net)
    out = []
    for label, group in sorted(nets.items(), key=lambda kv: path_of(kv[0]).rtt_us or 0):
        path = path_of(label)
        request, answer = path.split_us()

        def median(key: str, group: list[dict[str, Any]] = group) -> float | None:
            values = sorted(float(n[key]) for n in group if n.get(key) is not None)
            return values[len(values) // 2] if values else None

        measured, own, cpu = (median("measured_rtt_ms"), median("proxy_own_ms"),
                              median("proxy_cpu_us_per_op"))
        there = "the database" if key == "network" else "the stack"
        text = (f"{what} {path.title}: Toxiproxy, {request} µs to {there} and {answer} "
                f"µs back; RTT asked {(path.rtt_us or 0) / 1000:g} ms, measured "
                + ("-" if measured is None else f"{measured:.3f}")
                + f" ms (median of {len(group)} cases, each measured before it)")
        if own is not None:
            text += f"; the proxy's own cost {own * 1000:.0f} µs a round trip"
        if cpu is not None:
            text += f"; proxy CPU {cpu:,.0f} µs per {per}"
        out.append(text)
    return out


def paths_label(params: dict[str, Any]) -> str | None:
    """How a table names a case's paths: "1 ms" (database), "app 1 ms", or both;
    None off both axes."""
    db, app = params.get(PARAM), params.get(APP_PARAM)
    parts = ([path_of(str(db)).title] if db is not None else []) + \
        ([f"app {path_of(str(app)).title}"] if app is not None else [])
    return "; ".join(parts) if parts else None


def load_on_path(case: Case, url: str, run: Callable[[str], dict[str, Any]],
                 stop: Callable[[], None]) -> dict[str, Any]:
    """A served workload's load (`run(url)`) on a case's paths.

    The database path (`--db-rtt`): its proxy probed around all of the load (figures
    per request, `metrics["proxy"]`), the stack stopped (`stop`) after a routed case,
    whose proxy ends with the case. The generator -> stack path (`--app-rtt`): a proxy
    of the case's own in front of the stack, the load sent through it, its RTT measured
    before with trivial HTTP requests, the record's `app_network` object.
    """
    probe = proxy_probe(case.target)
    try:
        with app_path(case, url) as (load_url, app):
            if probe is not None:
                probe.begin()
            if app is not None:
                app[1].begin()
            try:
                metrics = run(load_url)
            finally:
                if probe is not None:
                    probe.end()
                if app is not None:
                    app[1].end()
    finally:
        if case.target.route is not None:
            stop()
    # the proxies saw every request sent in the window (a steady load's warm-up and the
    # runs its stop rule left out too), not only the counted ones
    requests = int(metrics.get("requests_sent") or metrics.get("requests") or 0)
    if probe is not None:
        metrics["proxy"] = probe.result(requests)
    if app is not None:
        metrics["app_network"] = path_record(APP_PARAM, app[0], app[2],
                                             app[1].result(requests))
    return metrics


@contextmanager
def app_path(case: Case, url: str
             ) -> Iterator[tuple[str, tuple[RttPath, ProxyProbe, dict[str, Any]] | None]]:
    """The URL the generator loads (through the case's app proxy when it has an
    --app-rtt path) and (path, probe, measured) of that proxy, else None."""
    label = case.params.get(APP_PARAM)
    path = path_of(str(label)) if label is not None else None
    if path is None or path.rtt_us is None:
        yield url, None
        return
    parts = urlsplit(url)
    host, port = parts.hostname or HOST, parts.port or 80
    with delayed(f"{host}:{port}", path, lambda: HttpPinger(host, port),
                 HttpPinger) as proxied:
        probe = ProxyProbe(proxied.pid, proxied.host, proxied.api_port)
        via = urlunsplit(parts._replace(netloc=f"{proxied.host}:{proxied.port}"))
        yield via, (path, probe, proxied.measured)


def app_paths(text: str | None) -> list[RttPath]:
    """The paths of `--app-rtt` (none when not given)."""
    if text is None:
        return []
    paths = parse_rtts(text, "--app-rtt")
    if any(p.rtt_us is not None for p in paths):
        PROGRAM.binary()
    return paths

