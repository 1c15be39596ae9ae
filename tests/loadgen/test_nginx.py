"""Against nginx from Debian: nginx's own access log agrees with the engine's
count, including when nginx closes keep-alive connections on its own."""

from __future__ import annotations

from pathlib import Path

from dbstand.loadgen import run_closed, run_open

from .conftest import Nginx, run_nginx


def test_count_matches_nginx_access_log(nginx: Nginx) -> None:
    r = run_closed(nginx.url(), connections=8, requests=3000)
    assert r.requests == r.successes == 3000
    assert nginx.logged_requests(3000) == 3000
    assert r.document_length == len(nginx.body)
    assert r.body_bytes == 3000 * len(nginx.body)
    assert r.server is not None and r.server.startswith("nginx")


def test_server_closing_keepalive_connections_is_not_an_error(tmp_path: Path) -> None:
    # nginx answers the 50th request of a connection with "Connection: close".
    with run_nginx(tmp_path / "ngx", keepalive_requests=50) as server:
        r = run_closed(server.url(), connections=4, requests=1000)
        assert r.successes == 1000 and r.errors.total == 0
        assert server.logged_requests(1000) == 1000


def test_connection_closed_by_the_server_while_idle_is_reopened(tmp_path: Path) -> None:
    # nginx drops keep-alive connections idle for 200 ms; the engine sends every
    # 500 ms on each connection, so every send finds its connection closed.
    with run_nginx(tmp_path / "ngx", keepalive_timeout="200ms") as server:
        r = run_open(server.url(), rate=4, duration=2.0, connections=2)
        assert r.requests == r.successes == 8
        assert r.errors.total == 0
        assert server.logged_requests(8) == 8


def test_no_keepalive_and_open_loop_against_nginx(nginx: Nginx) -> None:
    r = run_closed(nginx.url(), connections=4, requests=300, keepalive=False)
    assert r.successes == 300
    r = run_open(nginx.url(), rate=500, duration=1.0, connections=4)
    assert r.successes == 500
    assert nginx.logged_requests(800) == 800


def test_missing_file_is_counted_as_404(nginx: Nginx) -> None:
    r = run_closed(nginx.url("/missing"), connections=2, requests=20)
    assert r.status_counts == {404: 20} and r.successes == 0
