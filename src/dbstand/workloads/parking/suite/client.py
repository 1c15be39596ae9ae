"""A keep-alive HTTP client for the parking service, timing every call.

One client is one TCP connection (urllib3 pool of size 1, blocking), as a user of
the service would hold: concurrent virtual users each get their own. Latencies are
kept per function in nanoseconds so the workload can merge them into HDR
histograms; the suite never counts a call it did not make.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import urllib3

from dbstand.errors import UserError

#: seconds: a call slower than this is a failure of the service, not a slow answer
DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status code, content type, decoded JSON body (None if not JSON)."""

    http_status: int
    content_type: str
    body: dict[str, Any] | None
    raw: bytes


def call_failure(exc: BaseException) -> str:
    """What a call that got no HTTP answer met, in words a user acts on.

    urllib3 words a dead server's connection many ways (aborted, broken,
    IncompleteRead, RemoteDisconnected); a reader needs to know first whether it could
    not connect, timed out or lost the connection, and the library's text after that.
    """
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (urllib3.exceptions.NewConnectionError, ConnectionRefusedError)):
        return f"could not connect: refused or unreachable ({detail})"
    if isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError)):
        return f"no answer in time ({detail})"
    if isinstance(exc, (urllib3.exceptions.ProtocolError, ConnectionError)):
        return f"the connection was lost before the answer ended ({detail})"
    return detail


class ParkingClient:
    """GET /<function>?<query> over one kept-alive connection."""

    def __init__(self, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise UserError(f"the parking service URL must be http://host:port, "
                            f"not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.prefix = parts.path.rstrip("/")
        self.pool = urllib3.HTTPConnectionPool(
            parts.hostname, parts.port or 80, maxsize=1, block=True, retries=False,
            timeout=urllib3.Timeout(total=timeout_s))
        self.latencies_ns: dict[str, list[int]] = defaultdict(list)
        self.calls = 0

    def get(self, function: str, params: dict[str, str]) -> Answer:
        """One call; its latency (request sent to body read) is recorded under `function`."""
        url = f"{self.prefix}/{function}"
        if params:
            url += "?" + urlencode(params)
        start = time.perf_counter_ns()
        resp = self.pool.urlopen("GET", url, preload_content=True, redirect=False)
        elapsed = time.perf_counter_ns() - start
        self.latencies_ns[function].append(elapsed)
        self.calls += 1
        raw = resp.data or b""
        ctype = resp.headers.get("Content-Type", "")
        body: dict[str, Any] | None = None
        try:
            decoded = json.loads(raw)
            body = decoded if isinstance(decoded, dict) else None
        except ValueError:
            body = None
        return Answer(resp.status, ctype, body, raw)

    def take_latencies(self) -> dict[str, list[int]]:
        """The latencies recorded since the last take, emptied."""
        out = dict(self.latencies_ns)
        self.latencies_ns = defaultdict(list)
        return out

    def close(self) -> None:
        self.pool.close()
