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

from dbstand.network.route import Pinger, RoutedPath, check_networked, proxy_probe, routed
from dbstand.network.rtt import RttPath, parse_rtts, path_of
from dbstand.network.toxiproxy import PROGRAM
from dbstand.sql.ownership import DEFAULT_PREFIX
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, CaseOutcome

PARAM = "db_rtt"
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


def with_paths(cases: list[Case], paths: list[RttPath]) -> list[Case]:
    """Each case once per path, path by path (a path's cases run together)."""
    if not paths:
        return cases
    return [dataclasses.replace(case, params={**case.params, PARAM: path.label})
            for path in paths for case in cases]


def _open_pinger(target: TargetURL, prefix: str) -> Pinger:
    """The kind's own pinger (`targets/<kind>/ping.py`) if it has one, else its admin
    connection (workloads/kv/admin.py): SELECT 1 or Tarantool's ping."""
    import importlib

    try:
        module = importlib.import_module(f"dbstand.targets.{target.kind}.ping")
    except ModuleNotFoundError:
        from dbstand.workloads.kv.admin import admin_client

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
    (medians over the path's cases), the proxy's own cost, and its CPU per `per`."""
    nets: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        net = r.get("network")
        if r.get("status") == "ok" and isinstance(net, dict) and net.get("path") != "direct":
            nets.setdefault(str(net.get("db_rtt")), []).append(net)
    out = []
    for label, group in sorted(nets.items(), key=lambda kv: path_of(kv[0]).rtt_us or 0):
        path = path_of(label)
        request, answer = path.split_us()

        def median(key: str, group: list[dict[str, Any]] = group) -> float | None:
            values = sorted(float(n[key]) for n in group if n.get(key) is not None)
            return values[len(values) // 2] if values else None

        measured, own, cpu = (median("measured_rtt_ms"), median("proxy_own_ms"),
                              median("proxy_cpu_us_per_op"))
        text = (f"path {path.title}: Toxiproxy, {request} µs to the database and {answer} "
                f"µs back; RTT asked {(path.rtt_us or 0) / 1000:g} ms, measured "
                + ("-" if measured is None else f"{measured:.3f}")
                + f" ms (median of {len(group)} cases, each measured before it)")
        if own is not None:
            text += f"; the proxy's own cost {own * 1000:.0f} µs a round trip"
        if cpu is not None:
            text += f"; proxy CPU {cpu:,.0f} µs per {per}"
        out.append(text)
    return out


def load_on_path(target: TargetURL, run: Callable[[], dict[str, Any]],
                 stop: Callable[[], None]) -> dict[str, Any]:
    """A served workload's load (`run`) on a case's path: the proxy probed around all of
    it (its figures per request, `metrics["proxy"]`), and the stack stopped (`stop`)
    after a routed case, whose proxy ends with the case."""
    probe = proxy_probe(target)
    if probe is not None:
        probe.begin()
    try:
        metrics = run()
    finally:
        if probe is not None:
            probe.end()
        if target.route is not None:
            stop()
    if probe is not None:
        metrics["proxy"] = probe.result(int(metrics.get("requests") or 0))
    return metrics
