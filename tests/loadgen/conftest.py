"""Real servers for the load engine's tests: a small Python server in its own
process, and nginx from Debian with its own prefix, config, logs and pid in a
temp dir. Both listen on 127.0.0.1 on a free port and are always stopped."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dbstand.stacks.launcher import StackHandle, running_stack
from dbstand.stacks.manifest import get_manifest
from dbstand.workloads.webtech.verify import SERVED

HERE = Path(__file__).parent


@dataclass
class TestServer:
    """Handle on the Python test server process."""

    __test__ = False  # not a test class, despite its name

    proc: subprocess.Popen[str]
    port: int

    def url(self, path: str = "/hello") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def control(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(self.url(path), timeout=5) as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        self.control("/__reset")

    def stats(self) -> dict[str, Any]:
        """Counters; `connections` excludes the connection of this very call."""
        s = self.control("/__stats")
        s["connections"] -= 1
        return s

    def stall(self, ms: int, after_ms: int = 0) -> None:
        self.control(f"/__stall?ms={ms}&after_ms={after_ms}")

    def kill(self) -> None:
        self.proc.kill()


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def test_server() -> Iterator[TestServer]:
    proc = subprocess.Popen([sys.executable, str(HERE / "http_test_server.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("PORT "):
            err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
            pytest.fail(f"test server did not start: {line!r} {err}")
        yield TestServer(proc, int(line.split()[1]))
    finally:
        _stop(proc)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_nginx() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


@dataclass
class Nginx:
    """Handle on an nginx serving one static file, with an access log."""

    port: int
    prefix: Path
    body: bytes
    tls: bool = False

    def url(self, path: str = "/index.html") -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    @property
    def ca(self) -> Path:
        """The throwaway CA (PEM) that signed a TLS nginx's certificate."""
        return self.prefix / "ca.pem"

    def log_lines(self, expected: int) -> list[str]:
        """The access log's lines, once `expected` are in (or 3 s have passed)."""
        self.logged_requests(expected)
        log = self.prefix / "access.log"
        return log.read_text().splitlines() if log.exists() else []

    def logged_requests(self, expected: int) -> int:
        """Requests nginx itself logged (its own count, not the client's).

        nginx logs a request after sending its answer, so the last lines may
        land just after the client has its answers: wait (briefly) for them.
        """
        log = self.prefix / "access.log"
        deadline = time.monotonic() + 3
        while True:
            n = len(log.read_text().splitlines()) if log.exists() else 0
            if n >= expected or time.monotonic() > deadline:
                return n
            time.sleep(0.02)


NGINX_CONF = """\
{user}
worker_processes 1;
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    {temp_paths}
    log_format bare '$status $request_length $bytes_sent '
                    '$ssl_protocol $ssl_session_reused $server_protocol';
    access_log {prefix}/access.log bare;
    keepalive_requests {keepalive_requests};
    keepalive_timeout {keepalive_timeout};
    server {{
        listen 127.0.0.1:{port}{listen_tls}{listen_h2};
        {tls}
        root {prefix}/html;
        {dav}
    }}
}}
"""


def make_certificate(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A throwaway CA (`ca.pem`) and a server certificate it signed for `name` and
    127.0.0.1 (openssl CLI): (certificate, key)."""
    ca, ca_key = directory / "ca.pem", directory / "ca-key.pem"
    cert, key, csr = directory / "cert.pem", directory / "key.pem", directory / "cert.csr"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    subprocess.run(["openssl", "req", "-x509", *ec, "-days", "2", "-subj", "/CN=dbstand test CA",
                    "-keyout", str(ca_key), "-out", str(ca)], check=True, capture_output=True)
    subprocess.run(["openssl", "req", "-new", *ec, "-subj", f"/CN={name}", "-keyout", str(key),
                    "-out", str(csr)], check=True, capture_output=True)
    ext = directory / "san.ext"
    ext.write_text(f"subjectAltName=DNS:{name},IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    subprocess.run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey",
                    str(ca_key), "-CAcreateserial", "-days", "2", "-extfile", str(ext),
                    "-out", str(cert)], check=True, capture_output=True)
    return cert, key


TLS_CONF = """ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:tls:1m;"""


@contextlib.contextmanager
def run_nginx(prefix: Path, keepalive_requests: int = 1000,
              keepalive_timeout: str = "75s", tls: bool = False,
              http2: bool = False, dav: bool = False) -> Iterator[Nginx]:
    nginx = find_nginx()
    if nginx is None:
        pytest.fail("nginx is not installed: `make test` installs Debian's nginx")
    version = subprocess.run([nginx, "-V"], capture_output=True, text=True).stderr
    temps = [f"{name}_temp_path {prefix}/{name}_temp;"
             for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
             if re.search(rf"--http-{name.replace('_', '-')}-temp-path", version)]
    (prefix / "html").mkdir(parents=True)
    tls_conf = ""
    if tls:
        cert, key = make_certificate(prefix)
        tls_conf = TLS_CONF.format(cert=cert, key=key)
    body = b"x" * 310 + b"\n"
    (prefix / "html" / "index.html").write_bytes(body)
    port = free_port()
    conf = prefix / "nginx.conf"
    conf.write_text(NGINX_CONF.format(
        # as root, workers would drop to `nobody` and could not read a private temp dir
        user="user root;" if os.geteuid() == 0 else "",
        prefix=prefix, port=port, keepalive_requests=keepalive_requests,
        keepalive_timeout=keepalive_timeout,
        listen_tls=" ssl" if tls else "", tls=tls_conf, listen_h2=" http2" if http2 else "",
        # PUT stores the request body under root, so a test can read back what arrived
        dav="dav_methods PUT;" if dav else "",
        temp_paths="\n    ".join(temps)))
    proc = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(conf),
                             "-e", str(prefix / "error.log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            if proc.poll() is not None:
                err = (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
                pytest.fail(f"nginx did not start: {err[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("nginx did not listen within 10 s")
                time.sleep(0.05)
        yield Nginx(port, prefix, body, tls)
    finally:
        if proc.poll() is None:
            proc.send_signal(3)  # SIGQUIT: graceful stop
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Nginx]:
    with run_nginx(tmp_path / "nginx") as server:
        yield server


@pytest.fixture
def nginx_tls(tmp_path: Path) -> Iterator[Nginx]:
    """nginx serving the same file over TLS 1.2/1.3 with a throwaway certificate."""
    with run_nginx(tmp_path / "nginx", tls=True) as server:
        yield server


@pytest.fixture
def nginx_h2(tmp_path: Path) -> Iterator[Nginx]:
    """nginx serving the same file over HTTP/2 on TLS (ALPN h2)."""
    with run_nginx(tmp_path / "nginx", tls=True, http2=True) as server:
        yield server


#: webtech stack -> the page its served figure is checked on: the limit row's file, a
#: program's hello (test_wrk_agreement.py, test_served_bytes.py)
PAGES = {"static-nginx": "file", "go-nethttp": "hello"}


@pytest.fixture(scope="module")
def webtech_page(request: pytest.FixtureRequest) -> Iterator[tuple[StackHandle, str]]:
    """The stack named by the test's (indirect) parameter, with 4 workers, and its
    page's URL: one start per stack and module."""
    name = request.param
    with running_stack(get_manifest(name, "webtech"), workers=4,
                       static_dir=SERVED.static_dir) as handle:
        yield handle, f"{handle.base_url}/{PAGES[name]}"
