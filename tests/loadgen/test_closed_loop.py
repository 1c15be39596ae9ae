"""Closed loop against the Python test server: counts agree with the server's
own, every answer kind is framed right, and failures are never successes."""

from __future__ import annotations

import threading
import time

import pytest

from dbstand.loadgen import (
    LoadgenConfigError,
    TargetUnreachableError,
    run_closed,
)

from .conftest import TestServer, free_port


def test_request_count_matches_server_count(test_server: TestServer) -> None:
    test_server.reset()
    r = run_closed(test_server.url(), connections=8, requests=1000)
    stats = test_server.stats()
    assert r.requests == r.successes == 1000
    assert stats["requests"] == 1000
    assert stats["connections"] == 8, "keep-alive: one connection per client connection"
    assert r.status_counts == {200: 1000}
    assert r.errors.total == 0
    assert r.body_bytes == 5 * 1000
    assert r.latency().count == 1000
    assert r.server is not None and r.server.startswith("dbstand-test/1")
    assert r.document_length == 5
    assert r.cpu_s > 0 and r.process_cpu_s > 0 and r.elapsed_s > 0


def test_no_keepalive_opens_one_connection_per_request(test_server: TestServer) -> None:
    test_server.reset()
    r = run_closed(test_server.url(), connections=4, requests=200, keepalive=False)
    stats = test_server.stats()
    assert r.successes == 200
    assert stats["requests"] == 200
    assert stats["connections"] == 200


def test_duration_run_completes_requests_in_flight(test_server: TestServer) -> None:
    test_server.reset()
    r = run_closed(test_server.url(), connections=4, duration=1.0)
    stats = test_server.stats()
    assert 0.95 <= r.elapsed_s < 2.0
    assert r.requests > 100
    assert r.requests == r.successes == stats["requests"]


def test_chunked_and_close_delimited_bodies(test_server: TestServer) -> None:
    r = run_closed(test_server.url("/chunked"), connections=2, requests=100)
    assert r.successes == 100
    assert r.body_bytes == 26 * 100
    r = run_closed(test_server.url("/close"), connections=2, requests=50)
    assert r.successes == 50
    assert r.body_bytes == len(b"until-close-body") * 50


def test_non_2xx_is_never_a_success(test_server: TestServer) -> None:
    r = run_closed(test_server.url("/status/503"), connections=2, requests=60)
    assert r.requests == 60
    assert r.successes == 0
    assert r.status_counts == {503: 60}
    assert r.non_2xx == 60 and r.failed == 60
    r = run_closed(test_server.url("/status/301"), connections=1, requests=5)
    assert r.successes == 0 and r.status_counts == {301: 5}


def test_timeouts_are_counted_apart(test_server: TestServer) -> None:
    start = time.monotonic()
    r = run_closed(test_server.url("/sleep?ms=1500"), connections=3, requests=3, timeout_s=0.2)
    assert time.monotonic() - start < 1.2
    assert r.errors.timeout == 3
    assert r.successes == 0 and r.responses == 0


def test_requests_in_flight_when_the_server_dies_are_errors(test_server: TestServer) -> None:
    killer = threading.Timer(0.4, test_server.kill)
    killer.start()
    try:
        r = run_closed(test_server.url("/sleep?ms=3000"), connections=4, requests=8, timeout_s=10)
    finally:
        killer.cancel()
    assert r.successes == 0
    assert r.requests == 8
    # The 4 in flight lose their answer (read errors). The 4 sent after it find
    # nothing listening (connect errors), or, when they race the kernel tearing
    # the process down, a listener that resets them (read errors).
    assert r.errors.read >= 4
    assert r.errors.read + r.errors.connect == 8
    assert r.errors.total == 8 and r.errors.timeout == 0


def test_server_dying_mid_duration_run_ends_cleanly(test_server: TestServer) -> None:
    killer = threading.Timer(0.3, test_server.kill)
    killer.start()
    try:
        r = run_closed(test_server.url(), connections=4, duration=1.0)
    finally:
        killer.cancel()
    assert r.successes > 0
    assert r.errors.connect > 0
    assert r.requests == r.responses + r.errors.total
    assert r.elapsed_s < 2.0


def test_post_with_body_and_headers(test_server: TestServer) -> None:
    r = run_closed(test_server.url("/ticket"), connections=2, requests=20, method="POST",
                   headers={"Content-Type": "application/json"}, body='{"a": 1}')
    assert r.successes == 20


def test_nothing_listening_is_one_clear_error() -> None:
    port = free_port()
    with pytest.raises(TargetUnreachableError, match=f"127.0.0.1:{port}: Connection refused"):
        run_closed(f"http://127.0.0.1:{port}/", connections=1, requests=1)


@pytest.mark.parametrize(("url", "kwargs", "message"), [
    ("not a url", {"requests": 1}, "malformed URL"),
    ("ftp://127.0.0.1/", {"requests": 1}, "expected http\\[s\\]://"),
    ("http://127.0.0.1:99999/", {"requests": 1}, "bad host or port"),
    ("http://127.0.0.1:1/", {"requests": 0}, "at least 1"),
    ("http://127.0.0.1:1/", {}, "number of requests or a duration"),
    ("http://127.0.0.1:1/", {"requests": 1, "method": "GE T"}, "bad HTTP method"),
    ("http://127.0.0.1:1/", {"requests": 1, "headers": {"X": "a\r\nb"}}, "bad value"),
])
def test_bad_options_are_refused(url: str, kwargs: dict, message: str) -> None:
    with pytest.raises(LoadgenConfigError, match=message):
        run_closed(url, connections=1, **kwargs)


def test_zero_connections_is_refused() -> None:
    with pytest.raises(LoadgenConfigError, match="connections must be at least 1"):
        run_closed("http://127.0.0.1:1/", connections=0, requests=10)
