"""Open loop: the rate is held, and a server stall shows in the percentiles
(wrk2's classic demonstration) where the closed loop hides it."""

from __future__ import annotations

import pytest

from dbstand.loadgen import run_closed, run_open

from .conftest import TestServer

# every send on time (none missed), percentiles under 50 ms: a busy worker beside delays both
pytestmark = pytest.mark.exclusive


def test_open_loop_holds_the_rate(test_server: TestServer) -> None:
    test_server.reset()
    r = run_open(test_server.url(), rate=200, duration=1.0, connections=4)
    stats = test_server.stats()
    assert r.mode == "open" and r.rate == 200
    assert r.requests == 200  # every intended send of the window went out
    assert r.successes == stats["requests"] == 200
    assert 0.95 <= r.elapsed_s < 1.5
    assert r.missed == 0


def test_stall_shows_in_open_loop_and_hides_in_closed_loop(test_server: TestServer) -> None:
    stall_ms = 500
    test_server.stall(stall_ms, after_ms=500)
    closed = run_closed(test_server.url(), connections=4, duration=2.0)
    test_server.stall(stall_ms, after_ms=500)
    opened = run_open(test_server.url(), rate=400, duration=2.0, connections=4)

    c90, c_max = closed.percentiles_ms([90, 100]).values()
    o50, o90 = opened.percentiles_ms([50, 90]).values()
    # Closed loop: each connection waited once, so only 4 of thousands of
    # requests saw the stall; the max shows it, the percentiles do not.
    assert c_max >= 0.8 * stall_ms
    assert c90 < 50, closed.percentiles_ms([50, 90, 99, 100])
    # Open loop: every request due during the stall counts its wait: a quarter
    # of the run waited between 0 and 500 ms, so p90 sits far up in the stall.
    assert o90 > 150, opened.percentiles_ms([50, 75, 90, 99, 100])
    assert o90 > 5 * c90
    assert o50 < 50
    assert opened.successes == opened.requests
