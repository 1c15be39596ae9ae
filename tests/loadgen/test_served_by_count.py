"""A served load's runs by request count (http_load.py `by_count`, docquery's ab-like
runs) against the real test server: answers that take longer than the half second a
timed run waits at its end at least (the engine's END_GRACE) are all waited for and
counted as answers, and each run is exactly its planned number of requests."""

from __future__ import annotations

import re
import time

import pytest

from dbstand.errors import CaseFailed
from dbstand.workloads.http_load import LoadPlan, measure

from .conftest import TestServer

#: each answer takes longer than END_GRACE (0.5 s), as a single-threaded stack's does
#: when 100 connections queue behind it at under 200 requests/s
SLOW_MS = 700


def test_runs_by_count_wait_for_every_answer(test_server: TestServer) -> None:
    plan = LoadPlan(connections=2, requests=4, repeats=2, max_repeats=2, min_run_s=0.3,
                    warmup_s=1.0, max_warmup_s=3.0, warmup_step_s=0.3, interval_s=0,
                    keepalive=False, by_count=True, pin=False)
    m = measure(test_server.url(f"/sleep?ms={SLOW_MS}"), plan, test_server.proc.pid)
    assert m["errors"] == {"non_2xx": 0, "connect": 0, "read": 0, "write": 0,
                           "timeout": 0, "parse": 0}
    assert m["repeats"] == 2 and m["requests"] == m["successes"] == 2 * 4
    # a run of 4 requests on 2 connections lasts two answers, not a cut-off time
    assert all(s >= 2 * SLOW_MS / 1e3 for s in m["run_s"])
    assert m["load"]["by_count"] is True
    # the warm-up's steps after the first were by count too: every one answered
    assert m["warmup"]["steps"] >= 2 and m["warmup"]["rate"] > 0


def test_timed_steps_and_runs_wait_for_answers_as_slow_as_their_own(
        test_server: TestServer) -> None:
    """Timed (not by count): each answer takes 0.7 s, so the second request of each
    connection, sent at 0.7 s of a 0.8 s step, is answered 0.6 s past the step's end.
    The engine waits twice the slowest answer seen: every request is an answer. With
    a fixed half second the warm-up's first step failed them as timeouts, and the case
    with it ("in the warm-up: 2 of 4 requests failed": docquery's mongoengine at 100
    connections, 2026-11-27); the runs, sized from its rate, end the same way."""
    plan = LoadPlan(connections=2, requests=4, repeats=2, max_repeats=2, min_run_s=0.8,
                    warmup_s=0.8, max_warmup_s=0.8, warmup_step_s=0.8, interval_s=0,
                    keepalive=True, by_count=False, pin=False)
    m = measure(test_server.url("/sleep?ms=700"), plan, test_server.proc.pid)
    assert m["load"]["by_count"] is False
    assert m["errors"] == {"non_2xx": 0, "connect": 0, "read": 0, "write": 0,
                           "timeout": 0, "parse": 0}
    assert m["warmup"]["requests"] == 4 and m["repeats"] == 2
    assert m["requests"] == m["successes"] >= 2 * 4, m["run_s"]


def test_runs_by_count_last_the_minimum_time(test_server: TestServer) -> None:
    """A fast page's runs: the count comes from the rates seen (not the seed's 4), 1.1
    times what `min_run_s` holds at the fastest of them, and a run that outruns them
    goes on sending until `min_run_s` is up, every request answered (http_load.py
    `_run_plan`, the engine's `min_duration`). Before, the warm-up's short steps, which
    carry each run's fixed cost (a new connection per request here), let a first run
    beat them: one make test read runs of 0.415, 0.619 and 0.608 s, and docquery's
    quick study 0.808 and 0.912 s of a least 1 s."""
    plan = LoadPlan(connections=2, requests=4, repeats=3, max_repeats=3, min_run_s=0.5,
                    warmup_s=0.4, max_warmup_s=2.0, warmup_step_s=0.2, interval_s=0,
                    keepalive=False, by_count=True, pin=False)
    m = measure(test_server.url("/sleep?ms=100"), plan, test_server.proc.pid)
    assert m["repeats"] == 3 and m["requests"] == m["successes"] > 3 * 4
    assert min(m["run_s"]) >= 0.5, m["run_s"]
    # and the count follows the rates: a run of the seed's 4 would last 0.2 s, and
    # one sized from the warm-up's rate holds at least 1.1 x 0.5 s of it
    assert m["requests"] >= 3 * 1.1 * 0.5 * m["warmup"]["rate"] - 3, m


@pytest.mark.parametrize("by_count", [False, True])
def test_errors_in_the_warm_up_fail_the_case_there(test_server: TestServer,
                                                   by_count: bool) -> None:
    """A stack that starts answering 500 during the warm-up (its database gone) fails
    the case in the warm-up step that saw it. Before, the warm-up went on and the first
    run was sized from the collapsed rate of successes (5,000 requests at 20/s: over
    four minutes of errors before the case could fail)."""
    test_server.control("/__fail?code=500&after_ms=700")
    plan = LoadPlan(connections=1, requests=5000, repeats=2, max_repeats=3, min_run_s=0.3,
                    warmup_s=1.5, max_warmup_s=20.0, warmup_step_s=0.5, interval_s=0,
                    by_count=by_count, pin=False)
    started = time.monotonic()
    with pytest.raises(CaseFailed, match=r"^in the warm-up: \d+ of \d+ requests failed"):
        measure(test_server.url("/hello"), plan, test_server.proc.pid)
    # the step that met the errors ends the case, long before max_warmup_s
    assert time.monotonic() - started < plan.max_warmup_s / 2
    assert test_server.stats()["paths"]["/hello"] > 0


@pytest.mark.parametrize("by_count", [False, True])
def test_a_run_that_can_no_longer_pass_stops(test_server: TestServer, by_count: bool) -> None:
    """A stack whose answers turn to 500 after the warm-up (its database gone mid-run):
    the counted run sized for 200,000 requests (a minute and more here) stops once its
    failures pass `max_error_rate` of them, and the case fails in one line saying so."""
    plan = LoadPlan(connections=1, requests=200_000, repeats=2, max_repeats=3,
                    min_run_s=0.3, warmup_s=0.6, max_warmup_s=0.6, warmup_step_s=0.3,
                    interval_s=0, by_count=by_count, pin=False, max_error_rate=0.01)
    test_server.control("/__fail?code=500&after_ms=1500")
    started = time.monotonic()
    with pytest.raises(CaseFailed, match=r"^\d+ of \d+ requests failed .*the run stopped "
                                         r"there: status \{.*500: \d+"):
        measure(test_server.url("/hello"), plan, test_server.proc.pid)
    assert time.monotonic() - started < 10
    assert test_server.stats()["paths"]["/hello"] < 100_000


def test_the_bound_is_the_check_s_own() -> None:
    """The engine's bound lets through exactly the failures `_check_errors` passes:
    one more fails the case (the float comparison's edges included)."""
    from dbstand.loadgen.result import ErrorCounts, LoadResult
    from dbstand.workloads.http_load import _check_errors, allowed_failures

    for rate in (0.0, 0.01, 0.07, 0.29, 0.5):
        plan = LoadPlan(connections=1, max_error_rate=rate)
        for requests in (1, 7, 100, 5000):
            allowed = allowed_failures(rate, requests)
            for failed, passes in ((allowed, True), (allowed + 1, False)):
                if failed > requests:
                    continue
                run = LoadResult(requests=requests, successes=requests - failed,
                                 status_counts={200: requests - failed, 500: failed},
                                 errors=ErrorCounts(), check_failed=0, bytes=0,
                                 body_bytes=0, histogram="")
                try:
                    _check_errors([run], plan)
                    passed = True
                except CaseFailed:
                    passed = False
                assert passed is passes, (rate, requests, failed)


def test_a_run_by_count_that_slows_down_stops_at_its_time_cap(test_server: TestServer) -> None:
    """A stack that slows down after the warm-up and still answers every request (200 ms
    each: its database stalled, not gone): a run sized for the warm-up's rate (thousands
    of requests) would last many minutes at one connection, and no failure bound stops a
    run without failures. Its time cap (ten times its expected length, at least two request
    timeouts) ends it, and the case fails in one line saying so."""
    plan = LoadPlan(connections=1, requests=4, repeats=30, max_repeats=30, min_run_s=0.3,
                    warmup_s=0.6, max_warmup_s=0.6, warmup_step_s=0.3, interval_s=0,
                    by_count=True, pin=False, timeout_s=1.0)
    test_server.control("/__slow?ms=200&after_ms=1500")
    started = time.monotonic()
    with pytest.raises(CaseFailed, match=r"^(in the warm-up: )?a run of \d+ requests was "
                                         r"stopped at its time cap of [\d.]+ s .*: \d+ "
                                         r"answered, \d+ failed") as e:
        measure(test_server.url("/hello"), plan, test_server.proc.pid)
    elapsed = time.monotonic() - started
    found = re.search(r"a run of (\d+) requests .* time cap of ([\d.]+) s .*: (\d+) answered",
                      str(e.value))
    assert found
    planned, cap, answered = int(found.group(1)), float(found.group(2)), int(found.group(3))
    # the cap cut the run short (where the slow answers began within the run varies: a
    # loaded machine's warm-up ends later), and the case ended once the cap had passed
    assert answered < planned, e.value
    assert cap <= elapsed < cap + 10, (elapsed, e.value)
