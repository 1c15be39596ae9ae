"""A trivial HTTP request for the RTT check of the generator -> stack hop (`--app-rtt`):
`GET /` on one kept-alive connection, whatever the stack answers (a 404 is as good as
a 200: one request, one answer)."""

from __future__ import annotations

import http.client

TIMEOUT_S = 10.0


class HttpPinger:
    def __init__(self, host: str, port: int):
        self.conn = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
        self.ping()

    def ping(self) -> None:
        self.conn.request("GET", "/", headers={"Connection": "keep-alive"})
        answer = self.conn.getresponse()
        answer.read()
        if answer.will_close:  # a server that closes: the next request reconnects
            self.conn.close()

    def close(self) -> None:
        self.conn.close()
