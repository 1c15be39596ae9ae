"""A small HTTP/1.1 server for the load engine's tests, run as its own process.

Its own process, so a test can kill it mid-run (the "server dies" case) and so
its CPU never competes with the engine for the test process's GIL. It counts
every request it answers (control paths under /__ excepted) and every
connection it accepts; `/__stats` reports both.

Paths:
  /hello              200, fixed 5-byte body (Content-Length)
  /chunked            200, chunked body of 3 chunks (26 bytes decoded)
  /close              200, no Content-Length, body ends when the connection closes
  /status/<code>      that status, small body
  /sleep?ms=N         200 after N ms
  /ticket (POST)      JSON {"status": "success", "info": {"ticket": "<n>"}}
  /use?ticket=T       200 {"status": "success"} once per issued ticket, else
                      200 {"status": "bad_ticket"}
  /__stall?ms=M&after_ms=A   every request in [now+A, now+A+M] waits until its end
  /__fail?code=C&after_ms=A  every request from now+A on answers status C (a stack
                      whose database went away), until /__reset
  /__slow?ms=N&after_ms=A    every request from now+A on answers N ms later (a stack
                      that slowed down and still answers), until /__reset
  /__stats            JSON counters
  /__reset            zero the counters
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class State:
    """Counters and the stall window, shared by handler threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.connections = 0
        self.paths: dict[str, int] = {}
        self.tickets: set[str] = set()
        self.used = 0
        self.next_ticket = 1
        self.stall_from = 0.0
        self.stall_until = 0.0
        #: /__fail: the status every request answers from `fail_from` on (0: none)
        self.fail_code = 0
        self.fail_from = 0.0
        #: /__slow: seconds added to every answer from `slow_from` on (0: none)
        self.slow_s = 0.0
        self.slow_from = 0.0

    def count(self, path: str) -> None:
        with self.lock:
            self.requests += 1
            self.paths[path] = self.paths.get(path, 0) + 1

    def wait_out_stall(self) -> None:
        now = time.monotonic()
        with self.lock:
            start, end = self.stall_from, self.stall_until
        if start <= now < end:
            time.sleep(end - now)


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "dbstand-test/1"
    # Head and body leave in one segment: without these, Nagle holds the body
    # until the client's delayed ACK (40 ms), and every request takes 40 ms.
    disable_nagle_algorithm = True
    wbufsize = -1

    def log_message(self, format: str, *args: object) -> None:
        """Silence per-request logging (thousands of lines per test)."""

    def setup(self) -> None:
        super().setup()
        with STATE.lock:
            STATE.connections += 1

    def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj: object) -> None:
        self._send(200, json.dumps(obj).encode(), "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        if path.startswith("/__"):
            self._control(path, query)
            return
        STATE.wait_out_stall()
        STATE.count(path)
        if STATE.slow_s and time.monotonic() >= STATE.slow_from:
            time.sleep(STATE.slow_s)
        if STATE.fail_code and time.monotonic() >= STATE.fail_from:
            self._send(STATE.fail_code, b"failing")
            return
        if path == "/hello":
            self._send(200, b"hello")
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in (b"abcdefghij", b"klmnopqrst", b"uvwxyz"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/close":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"until-close-body")
            self.close_connection = True
        elif path.startswith("/status/"):
            self._send(int(path.rsplit("/", 1)[1]), b"status")
        elif path == "/sleep":
            time.sleep(int(query.get("ms", "0")) / 1000)
            self._send(200, b"slept")
        elif path == "/ticket":
            with STATE.lock:
                ticket = f"T{STATE.next_ticket}"
                STATE.next_ticket += 1
                STATE.tickets.add(ticket)
            self._json({"status": "success", "info": {"ticket": ticket}})
        elif path == "/use":
            with STATE.lock:
                ok = query.get("ticket", "") in STATE.tickets
                if ok:
                    STATE.tickets.discard(query["ticket"])
                    STATE.used += 1
            self._json({"status": "success" if ok else "bad_ticket"})
        else:
            self._send(404, b"not found")

    def _control(self, path: str, query: dict[str, str]) -> None:
        if path == "/__stall":
            now = time.monotonic()
            with STATE.lock:
                STATE.stall_from = now + int(query.get("after_ms", "0")) / 1000
                STATE.stall_until = STATE.stall_from + int(query.get("ms", "0")) / 1000
            self._json({"ok": True})
        elif path == "/__fail":
            with STATE.lock:
                STATE.fail_from = time.monotonic() + int(query.get("after_ms", "0")) / 1000
                STATE.fail_code = int(query.get("code", "500"))
            self._json({"ok": True})
        elif path == "/__slow":
            with STATE.lock:
                STATE.slow_from = time.monotonic() + int(query.get("after_ms", "0")) / 1000
                STATE.slow_s = int(query.get("ms", "0")) / 1000
            self._json({"ok": True})
        elif path == "/__stats":
            with STATE.lock:
                self._json({"requests": STATE.requests, "connections": STATE.connections,
                            "paths": STATE.paths, "used": STATE.used})
        elif path == "/__reset":
            with STATE.lock:
                STATE.requests = STATE.connections = STATE.used = STATE.fail_code = 0
                STATE.slow_s = 0.0
                STATE.paths = {}
            self._json({"ok": True})
        else:
            self._send(404, b"no such control")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main() -> None:
    server = Server(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
