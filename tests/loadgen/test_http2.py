"""HTTP/2 against nginx from Debian (h2 over TLS, h2c): nginx's access log and
h2load, an independent HTTP/2 client, agree with what the engine counts."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dbstand.loadgen import LoadgenConfigError, TargetUnreachableError, run_closed
from dbstand.loadgen.tls import TlsSettings

from .conftest import Nginx, run_nginx

INSECURE = TlsSettings(insecure=True)


def test_streams_over_tls_counted_as_nginx_and_h2load_count(nginx_h2: Nginx) -> None:
    r = run_closed(nginx_h2.url(), connections=4, requests=2000, http2=True, streams=10,
                   tls=INSECURE)
    assert r.requests == r.successes == 2000 and r.errors.total == 0
    assert r.handshakes == 4 and r.io == "epoll"
    assert r.document_length == len(nginx_h2.body)
    assert r.body_bytes == 2000 * len(nginx_h2.body)
    assert r.latency().count == 2000
    assert nginx_h2.logged_requests(2000) == 2000
    assert {line.split()[-1] for line in nginx_h2.log_lines(2000)} == {"HTTP/2.0"}
    h2load = shutil.which("h2load")
    assert h2load, "h2load is missing: scripts/install-debian-deps.sh installs nghttp2-client"
    out = subprocess.run([h2load, "-n", "1000", "-c", "4", "-m", "10", nginx_h2.url()],
                         capture_output=True, text=True, timeout=60).stdout
    assert re.search(r"status codes: 1000 2xx", out), out
    assert nginx_h2.logged_requests(3000) == 3000


def test_goaway_after_keepalive_requests_reopens_without_errors(tmp_path: Path) -> None:
    # nginx ends an HTTP/2 connection (GOAWAY) after 50 requests on it.
    with run_nginx(tmp_path / "ngx", keepalive_requests=50, tls=True, http2=True) as server:
        r = run_closed(server.url(), connections=2, requests=1000, http2=True, streams=8,
                       tls=INSECURE)
        assert r.requests == r.successes == 1000 and r.errors.total == 0
        assert r.handshakes >= 1000 // 50
        assert server.logged_requests(1000) == 1000


def test_h2c_prior_knowledge(tmp_path: Path) -> None:
    with run_nginx(tmp_path / "ngx", http2=True) as server:
        r = run_closed(server.url(), connections=2, requests=500, http2=True, streams=5)
        assert r.successes == 500 and r.handshakes == 0
        assert {line.split()[-1] for line in server.log_lines(500)} == {"HTTP/2.0"}


def test_request_bodies_arrive_whole(tmp_path: Path) -> None:
    # Larger than nginx's initial stream window (64 KiB): the body waits for its
    # WINDOW_UPDATE half-way, as flow control wants.
    body = bytes(range(256)) * 300
    with run_nginx(tmp_path / "ngx", http2=True, dav=True) as server:
        r = run_closed(server.url("/put.bin"), connections=2, requests=20, http2=True,
                       streams=4, method="PUT", body=body)
        assert r.requests == r.successes == 20 and r.errors.total == 0
        lines = server.log_lines(20)
    assert (tmp_path / "ngx" / "html" / "put.bin").read_bytes() == body
    assert len(lines) == 20
    assert all(int(line.split()[1]) > len(body) for line in lines), lines[:3]


def test_unanswered_streams_time_out_one_by_one() -> None:
    # A listener that takes connections and never answers: each stream times out
    # on its own and its slot sends the next request on the same connection.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        r = run_closed(f"http://127.0.0.1:{port}/", connections=1, requests=6, http2=True,
                       streams=3, timeout_s=0.2)
    assert r.requests == 6 and r.successes == 0
    assert r.errors.timeout == 6 and r.errors.total == 6


def test_http2_refusals(nginx_tls: Nginx) -> None:
    refused = r"NoApplicationProtocol|does not offer HTTP/2"
    with pytest.raises(TargetUnreachableError, match=refused):
        run_closed(nginx_tls.url(), connections=1, requests=1, http2=True, tls=INSECURE)
    with pytest.raises(LoadgenConfigError, match=r"streams per connection need HTTP/2"):
        run_closed(nginx_tls.url(), connections=1, requests=1, streams=4, tls=INSECURE)
    with pytest.raises(LoadgenConfigError, match="keeps its connections"):
        run_closed(nginx_tls.url(), connections=1, requests=1, http2=True, keepalive=False,
                   tls=INSECURE)


def test_cli_http2_records_streams_and_handshakes(nginx_h2: Nginx, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "DBSTAND_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "dbstand", "http", nginx_h2.url(), "-c", "2",
                           "-n", "300", "--insecure", "--http2", "--streams", "10",
                           "-o", str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "HTTP/2, 10 streams per connection" in done.stdout
    case = next(r for r in map(json.loads, out.read_text().splitlines())
                if r.get("type") == "case")
    assert case["params"]["http2"] is True and case["params"]["streams"] == 10
    assert case["params"]["tls"]["insecure"] is True
    assert case["http"]["successes"] == 300 and case["http"]["handshakes"] == 2
    assert nginx_h2.logged_requests(300) == 300
