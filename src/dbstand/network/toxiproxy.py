"""Toxiproxy v2.5.0 as dbstand runs it: built once from `toxiproxy/` (its main.go adds
the microsecond "delay" toxic), started as a managed server on 127.0.0.1 and driven
through its HTTP API.

The program is kept in the user's cache like FerretDB (targets/gobuild.py);
$DBSTAND_TOXIPROXY_BIN names a ready-made one. Faults use Toxiproxy's own toxics:
`reset_peer` (a connection reset), `timeout` (a stall: data stops, nothing is closed),
`slow_close` (a close delayed).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import time
from pathlib import Path
from typing import Any

from dbstand.errors import ServerError
from dbstand.network.helper import HelperServer, last_line
from dbstand.targets.gobuild import GoProgram, reachable_copy
from dbstand.targets.managed import ServerRecord, chown_tree, stop_process

PROGRAM = GoProgram("toxiproxy", "Toxiproxy", Path(__file__).resolve().parent / "toxiproxy",
                    "DBSTAND_TOXIPROXY_BIN")
HOST = "127.0.0.1"
START_TIMEOUT_S = 20.0
API_TIMEOUT_S = 10.0
#: the two directions of a proxied connection, as Toxiproxy names them
REQUEST, ANSWER = "upstream", "downstream"


class ToxiproxyAPI:
    """Toxiproxy's HTTP API on 127.0.0.1:`port` (JSON in and out)."""

    def __init__(self, port: int, host: str = HOST):
        self.host = host
        self.port = port

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=API_TIMEOUT_S)
        try:
            payload = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=payload,
                         headers={"Content-Type": "application/json"} if payload else {})
            answer = conn.getresponse()
            data = answer.read()
        except OSError as exc:
            raise ServerError(f"Toxiproxy's API on {self.host}:{self.port} did not answer "
                              f"{method} {path}: {exc}") from None
        finally:
            conn.close()
        if answer.status >= 300:
            reason = data.decode(errors="replace").strip()
            with contextlib.suppress(ValueError, AttributeError):
                reason = json.loads(reason).get("error", reason)
            raise ServerError(f"Toxiproxy refused {method} {path}: {answer.status} {reason}")
        return json.loads(data) if data.strip() else None

    def version(self) -> str:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=API_TIMEOUT_S)
        try:
            conn.request("GET", "/version")
            return conn.getresponse().read().decode().strip()
        finally:
            conn.close()

    def create_proxy(self, name: str, upstream: str, listen: str = f"{HOST}:0") -> int:
        """A proxy from a free port of `listen`'s host to `upstream`; its port."""
        answer = self.call("POST", "/proxies", {"name": name, "listen": listen,
                                                "upstream": upstream, "enabled": True})
        return int(str(answer["listen"]).rpartition(":")[2])

    def add_toxic(self, proxy: str, name: str, kind: str, stream: str,
                  attributes: dict[str, Any], toxicity: float = 1.0) -> None:
        self.call("POST", f"/proxies/{proxy}/toxics",
                  {"name": name, "type": kind, "stream": stream, "toxicity": toxicity,
                   "attributes": attributes})

    def remove_toxic(self, proxy: str, name: str) -> None:
        self.call("DELETE", f"/proxies/{proxy}/toxics/{name}")

    def toxics(self, proxy: str) -> list[dict[str, Any]]:
        return list(self.call("GET", f"/proxies/{proxy}/toxics") or [])

    def set_delay(self, proxy: str, request_us: int, answer_us: int) -> None:
        """The proxy's delay in each direction (0: none), through "delay" toxics that
        also count the proxy's turns (`turns`)."""
        present = {t["name"] for t in self.toxics(proxy)}
        for stream, direction, micros in ((REQUEST, "request", request_us),
                                          (ANSWER, "answer", answer_us)):
            name = f"delay_{stream}"
            attributes = {"delay_us": micros, "meter": proxy, "direction": direction}
            if name in present:
                self.call("POST", f"/proxies/{proxy}/toxics/{name}",
                          {"attributes": attributes})
            else:
                self.add_toxic(proxy, name, "delay", stream, attributes)

    def turns(self, proxy: str) -> int:
        """Request-then-answer turns the proxy has seen so far (its "delay" toxics')."""
        answer = self.call("GET", f"/proxies/{proxy}/toxics/delay_{ANSWER}")
        return int(answer["attributes"]["turns"])

    def departures(self, proxy: str) -> tuple[int, float]:
        """Delayed chunks the proxy has handed on so far (both directions), and their
        summed lateness against when they were due, µs (negative: early)."""
        attributes = self.call("GET", f"/proxies/{proxy}/toxics/delay_{ANSWER}")["attributes"]
        return int(attributes["released"]), int(attributes["late_ns"]) / 1000


class ManagedToxiproxy(HelperServer):
    """A throwaway Toxiproxy whose API listens on 127.0.0.1 (or `host`: an address of
    a network namespace a test made), stopped with its process tree."""

    kind = "toxiproxy"

    def __init__(self, port: int | None = None, settings: dict[str, Any] | None = None):
        super().__init__(port, settings)
        self.host = str(self.settings.get("host", HOST))

    @property
    def api(self) -> ToxiproxyAPI:
        return ToxiproxyAPI(self.port, self.host)

    def _start(self, base_dir: Path) -> ServerRecord:
        built = PROGRAM.binary()
        version = PROGRAM.version(built)
        chown_tree(base_dir, self.run_as)
        binary = built if self.run_as is None else reachable_copy(built, base_dir)
        log_path = base_dir / "toxiproxy.log"
        with open(log_path, "ab") as log_fh:
            proc = self._spawn([str(binary), "-host", self.host, "-port", str(self.port)],
                               base_dir, log_fh)
        try:
            self._wait_ready(log_path)
        except BaseException:
            stop_process(proc.pid, proc, sig=signal.SIGKILL)
            raise
        return ServerRecord(
            kind=self.kind, pid=proc.pid, port=self.port,
            url=f"http://{self.host}:{self.port}", password="", base_dir=str(base_dir),
            log_path=str(log_path), run_as=self.run_as,
            settings={"server": version, "binary": str(built), "api": f"{self.host}:"
                      f"{self.port}"})

    def _wait_ready(self, log_path: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self._proc is not None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ServerError(f"Toxiproxy exited with code {self._proc.returncode} "
                                  f"before it was ready: {last_line(log_path)}")
            try:
                if self.api.version():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise ServerError(f"Toxiproxy did not answer on {self.host}:{self.port} within "
                          f"{START_TIMEOUT_S:.0f} s: {last_line(log_path)}")
