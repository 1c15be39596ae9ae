"""The TLS terminator of the `--tls on` axis: one managed nginx in front of a server
stack, with a throwaway certificate made for it (docs/tls.md).

Every stack gets the same terminator (same program, same settings, same certificate
kind), so the cost of TLS compares across stacks: the generator speaks TLS to nginx on
127.0.0.1, nginx speaks plain HTTP/1.1 to the stack over kept-alive upstream
connections. nginx is the usual way a stack without TLS of its own is served over
HTTPS; its process tree is measured apart (the placement table's `proxy` tier).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dbstand.errors import ServerError, UserError
from dbstand.network.helper import HelperServer, last_line
from dbstand.targets.managed import (
    LOOPBACK,
    ServerRecord,
    chown_tree,
    stop_process,
    wait_for_port,
)

START_TIMEOUT_S = 20.0
#: the certificate's key: ECDSA P-256, what most TLS deployments serve today
CURVE = "prime256v1"

CONF = """\
worker_processes {workers};
daemon off;
master_process on;
pid {base}/nginx.pid;
error_log {base}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {base}/tmp/body;
    proxy_temp_path {base}/tmp/proxy;
    fastcgi_temp_path {base}/tmp/fastcgi;
    uwsgi_temp_path {base}/tmp/uwsgi;
    scgi_temp_path {base}/tmp/scgi;
    keepalive_requests 10000000;
    keepalive_timeout 65;
    upstream stack {{
        server {upstream};
        keepalive 256;
        keepalive_requests 10000000;
    }}
    server {{
        listen {host}:{port} ssl;
        ssl_certificate {base}/cert.pem;
        ssl_certificate_key {base}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:tls:4m;
        ssl_session_tickets on;
        location / {{
            proxy_pass http://stack;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
        }}
    }}
}}
"""


def tool(name: str, package: str) -> str:
    """A program the terminator needs, or one line naming the Debian package."""
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if Path(p).exists()), None)
    if found is None:
        raise UserError(f"--tls on needs {name} on PATH (Debian: apt-get install {package})")
    return found


def check_tools() -> None:
    """Before a run: nginx and openssl are there."""
    tool("nginx", "nginx")
    tool("openssl", "openssl")


def make_certificate(folder: Path, host: str = LOOPBACK) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for `host` (valid one day): (cert, key)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    argv = [tool("openssl", "openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt",
            f"ec_paramgen_curve:{CURVE}", "-nodes", "-days", "1", "-subj", f"/CN={host}",
            "-addext", f"subjectAltName=IP:{host}", "-keyout", str(key), "-out", str(cert)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ServerError(f"openssl could not make the throwaway certificate: {tail[0]}")
    return cert, key


class ManagedTlsFront(HelperServer):
    """nginx terminating TLS on a free 127.0.0.1 port in front of `upstream`
    ("127.0.0.1:PORT", the stack), stopped with its process tree."""

    kind = "tls-front"

    def __init__(self, upstream: str, workers: int = 1):
        super().__init__(settings={"upstream": upstream, "workers": workers})

    @property
    def url(self) -> str:
        return f"https://{self.bind}:{self.port}"

    def _start(self, base_dir: Path) -> ServerRecord:
        nginx = tool("nginx", "nginx")
        make_certificate(base_dir, self.bind)
        (base_dir / "tmp").mkdir()
        conf = base_dir / "nginx.conf"
        conf.write_text(CONF.format(workers=self.settings["workers"], base=base_dir,
                                    upstream=self.settings["upstream"], host=self.bind,
                                    port=self.port))
        chown_tree(base_dir, self.run_as)
        log_path = base_dir / "error.log"
        proc = self._spawn([nginx, "-p", str(base_dir), "-c", str(conf), "-e", str(log_path)],
                           base_dir)
        try:
            wait_for_port(self.port, START_TIMEOUT_S, proc, self.bind)
        except ServerError:
            stop_process(proc.pid, proc, timeout_s=5.0)
            raise ServerError(f"the TLS terminator (nginx) did not start: "
                              f"{last_line(log_path)}") from None
        except BaseException:
            stop_process(proc.pid, proc, timeout_s=5.0)
            raise
        return ServerRecord(kind=self.kind, pid=proc.pid, port=self.port,
                            url=self.url, password="", base_dir=str(base_dir),
                            log_path=str(log_path), run_as=self.run_as,
                            settings={**self.settings, "server": _version(nginx)})


def _version(nginx: str) -> str:
    done = subprocess.run([nginx, "-v"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).strip().rpartition(": ")[2] or "nginx"

