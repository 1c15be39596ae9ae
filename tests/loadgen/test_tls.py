"""HTTPS against nginx from Debian with a throwaway certificate: nginx's own access
log (protocol, reused session) and curl agree with what the engine counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbstand.loadgen import TargetUnreachableError, run_closed, run_open
from dbstand.loadgen.tls import TlsSettings

from .conftest import Nginx

INSECURE = TlsSettings(insecure=True)


def test_keepalive_run_counts_one_handshake_per_connection(nginx_tls: Nginx) -> None:
    r = run_closed(nginx_tls.url(), connections=8, requests=2000, tls=INSECURE)
    assert r.requests == r.successes == 2000 and r.errors.total == 0
    assert nginx_tls.logged_requests(2000) == 2000
    assert r.document_length == len(nginx_tls.body)
    assert r.body_bytes == 2000 * len(nginx_tls.body)
    assert r.io == "epoll"  # io_uring serves plain sockets only
    assert r.handshakes == 8
    assert r.handshake_latency().count == 8 and r.handshake_latency().min() > 0


def test_new_connection_per_request_resumes_sessions_as_nginx_sees(nginx_tls: Nginx) -> None:
    r = run_closed(nginx_tls.url(), connections=2, requests=200, keepalive=False, tls=INSECURE)
    assert r.successes == 200 and r.handshakes == 200
    lines = nginx_tls.log_lines(200)
    assert len(lines) == 200
    reused = sum(line.split()[4] == "r" for line in lines)
    assert r.handshakes_resumed == reused
    assert reused >= 190  # only the first connection(s) of each thread do a full handshake


def test_no_resumption_means_full_handshakes(nginx_tls: Nginx) -> None:
    tls = TlsSettings(insecure=True, resume=False)
    r = run_closed(nginx_tls.url(), connections=2, requests=100, keepalive=False, tls=tls)
    assert r.successes == 100 and r.handshakes == 100 and r.handshakes_resumed == 0
    assert not any(line.split()[4] == "r" for line in nginx_tls.log_lines(100))


@pytest.mark.parametrize("version", ["1.2", "1.3"])
def test_tls_version_is_what_nginx_negotiated(nginx_tls: Nginx, version: str) -> None:
    tls = TlsSettings(insecure=True, version=version)
    r = run_open(nginx_tls.url(), rate=200, duration=0.5, connections=2, tls=tls)
    assert r.successes == 100
    protocols = {line.split()[3] for line in nginx_tls.log_lines(100)}
    assert protocols == {f"TLSv{version}"}


def test_certificates_are_verified_unless_insecure(nginx_tls: Nginx) -> None:
    with pytest.raises(TargetUnreachableError, match=r"TLS handshake .* failed"):
        run_closed(nginx_tls.url(), connections=1, requests=1)
    r = run_closed(nginx_tls.url(), connections=1, requests=5,
                   tls=TlsSettings(ca_file=str(nginx_tls.ca)))
    assert r.successes == 5
    with pytest.raises(TargetUnreachableError, match="TLS handshake"):
        run_closed(nginx_tls.url(), connections=1, requests=1,
                   tls=TlsSettings(ca_file=str(nginx_tls.ca), sni="other.example"))
    r = run_closed(nginx_tls.url().replace("127.0.0.1", "localhost"), connections=1,
                   requests=5, tls=TlsSettings(ca_file=str(nginx_tls.ca)))
    assert r.successes == 5


def test_cli_over_https_agrees_with_curl(nginx_tls: Nginx, tmp_path: Path) -> None:
    curl = subprocess.run(["curl", "-sS", "--cacert", str(nginx_tls.ca), "-o", "-",
                           "-w", "%{http_code} %{size_download}", nginx_tls.url()],
                          capture_output=True, check=True)
    code, size = curl.stdout[len(nginx_tls.body):].decode().split()
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "DBSTAND_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "dbstand", "http", nginx_tls.url(), "-c", "4",
                           "-n", "400", "--insecure", "-o", str(out)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "TLS handshakes:         4 (" in done.stdout
    case = next(r for r in map(json.loads, out.read_text().splitlines())
                if r.get("kind") == "case" or r.get("type") == "case")
    http = case.get("http") or case
    assert http["successes"] == 400 and http["handshakes"] == 4
    assert http["document_length"] == int(size) and code == "200"


def test_tls_options_need_https(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "dbstand", "http", "http://127.0.0.1:9/",
                           "--insecure", "-o", str(tmp_path / "r.jsonl")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "need an https:// URL" in done.stderr
    assert "Traceback" not in done.stderr
