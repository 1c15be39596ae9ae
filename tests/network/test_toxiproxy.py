"""The managed Toxiproxy against a real PostgreSQL: started and stopped like a managed
server, its delay on the live path, its turn count, and a routed case's probes."""

from __future__ import annotations

import psutil
import pytest

import managed_server_checks as checks
from dbstand.network.route import PROXY_NAME, proxy_probe, routed, trivial_latency_us
from dbstand.network.rtt import RttPath
from dbstand.network.toxiproxy import ManagedToxiproxy, ToxiproxyAPI
from dbstand.probes.locate import server_pid
from dbstand.targets.managed import ServerRecord, pid_running
from dbstand.workloads.admin import admin_client


def _pinger(target):  # type: ignore[no-untyped-def]
    return admin_client(target, "dbstand_")


def test_start_stop_and_loopback_only() -> None:
    server = ManagedToxiproxy()
    with server as record:
        assert record.settings["server"] == "Toxiproxy v2.5.0"
        checks.listens_on_loopback_only(record)
        assert ToxiproxyAPI(record.port).version()
    assert not pid_running(record.pid)
    checks.stop_removes_process_and_dir(ManagedToxiproxy())


def test_a_routed_target_gains_the_rtt_and_keeps_its_database(pg: ServerRecord) -> None:
    target = pg.target()
    with routed(target, RttPath(1000), _pinger) as path:
        via = path.target
        assert via.port != target.port and via.direct() == target
        # probes look at the database, not at the proxy in front of it
        assert server_pid(via)[0] == pg.pid
        measured = path.measured
        assert measured["delay_us"] == {"request": 500, "answer": 500}
        # a delay is never shorter than asked (a loaded machine only adds to it)
        assert measured["measured_rtt_ms"] >= 0.95
        assert measured["trivial_request_us"]["proxy_delayed"] > \
            measured["trivial_request_us"]["proxy_no_delay"] + 950
        proxy_pid = via.route.proxy_pid  # type: ignore[union-attr]
        assert pid_running(proxy_pid)
        # each trivial request is one request-then-answer turn of the proxy
        probe = proxy_probe(via)
        assert probe is not None
        client = _pinger(via)
        try:
            probe.begin()
            trivial_latency_us(client, count=30)  # + its 10 uncounted ones
            probe.end()
        finally:
            client.close()
        # 40 requests: 40 turns (one more if the connection's last set-up answer is
        # counted after `begin`), never the 80 of counting both directions' chunks
        assert 40 <= probe.result(1)["round_trips_per_op"] <= 41
    assert not pid_running(proxy_pid)
    assert not any(p.pid == proxy_pid for p in psutil.Process().children(recursive=True))


def test_the_zero_path_has_a_proxy_and_no_delay(pg: ServerRecord) -> None:
    with routed(pg.target(), RttPath(0), _pinger) as path:
        assert path.target.route is not None
        api = ToxiproxyAPI(path.target.route.api_port)
        delays = {t["attributes"]["delay_us"] for t in api.toxics(PROXY_NAME)}
        assert delays == {0}
        assert path.measured["measured_rtt_ms"] < 0.5


def test_the_direct_path_is_the_target_itself(pg: ServerRecord) -> None:
    with routed(pg.target(), RttPath(None), _pinger) as path:
        assert path.target == pg.target() and path.target.route is None


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///x.db"])
def test_an_embedded_database_has_no_network(cli, url: str) -> None:
    for workload in ("kv", "batch"):
        res = cli("run", workload, "--target", url, "--db-rtt", "1ms")
        assert res.code == 2
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "embedded SQLite" in lines[0], res.stderr
        assert "no network between client and database" in lines[0]
