"""Scenarios: values captured from JSON answers flow into later requests, each
step has its own histogram, and failed checks are failures."""

from __future__ import annotations

import pytest

from dbstand.loadgen import LoadgenConfigError, Scenario, Step, run_scenario

from .conftest import TestServer

TICKETS = Scenario(steps=[
    Step(name="issue", method="POST", path="/ticket?vu={{vu}}&i={{iter}}",
         headers={"Content-Type": "application/json"}, body='{"plate": "{{plate}}"}',
         captures={"ticket": "info.ticket"}, expect={"status": "success"}),
    Step(name="use", path="/use?ticket={{ticket|url}}", expect={"/status": "success"}),
], vars={"plate": "AB 123"})


def test_captured_ticket_is_used_by_the_next_step(test_server: TestServer) -> None:
    test_server.reset()
    r = run_scenario(test_server.url("/"), TICKETS, users=4, iterations=100)
    stats = test_server.stats()
    assert r.mode == "scenario"
    assert r.iterations_ok == 100 and r.iterations_failed == 0
    assert stats["used"] == 100, "every ticket captured was sent back"
    assert stats["paths"] == {"/ticket": 100, "/use": 100}
    assert [s.name for s in r.steps] == ["issue", "use"]
    for step in r.steps:
        assert step.requests == step.successes == 100
        assert step.latency().count == 100
    assert r.requests == r.successes == 200
    assert r.latency().count == 200
    assert r.iterations_histogram is not None


def test_failed_check_fails_the_iteration(test_server: TestServer) -> None:
    broken = Scenario(steps=[
        Step(name="issue", method="POST", path="/ticket", captures={"ticket": "info.ticket"}),
        Step(name="use-wrong", path="/use?ticket=nope{{ticket}}", expect={"status": "success"}),
        Step(name="never", path="/hello"),
    ])
    test_server.reset()
    r = run_scenario(test_server.url("/"), broken, users=2, iterations=10)
    assert r.iterations_ok == 0 and r.iterations_failed == 10
    issue, use, never = r.steps
    assert issue.successes == 10
    assert use.requests == 10 and use.successes == 0 and use.check_failed == 10
    assert never.requests == 0
    assert r.check_failed == 10
    assert r.first_check_error is not None and "bad_ticket" in r.first_check_error
    assert test_server.stats()["paths"].get("/hello") is None


def test_non_2xx_step_stops_the_iteration(test_server: TestServer) -> None:
    sc = Scenario(steps=[Step(name="missing", path="/status/404"),
                         Step(name="next", path="/hello")])
    r = run_scenario(test_server.url("/"), sc, users=1, iterations=5)
    assert r.iterations_failed == 5
    assert r.steps[0].status_counts == {404: 5}
    assert r.steps[1].requests == 0


def test_scenario_for_a_duration(test_server: TestServer) -> None:
    r = run_scenario(test_server.url("/"), TICKETS, users=2, duration=0.5)
    assert r.iterations_ok > 10 and r.iterations_failed == 0
    assert r.steps[0].requests == r.steps[1].requests == r.iterations_ok


@pytest.mark.parametrize(("steps", "message"), [
    ([Step(name="a", path="/{{nope}}")], "unknown variable 'nope'"),
    ([Step(name="a", path="/{{t}}"), Step(name="b", path="/", captures={"t": "x"})],
     "before any earlier step captures it"),
    ([Step(name="a", path="no-slash")], "must start with '/'"),
    ([], "at least one step"),
])
def test_bad_scenarios_are_refused_before_the_run(steps: list[Step], message: str) -> None:
    with pytest.raises(LoadgenConfigError, match=message):
        run_scenario("http://127.0.0.1:1/", Scenario(steps=steps), users=1, iterations=1)


def test_scenario_from_plain_data() -> None:
    sc = Scenario.from_dict({"steps": [{"name": "a", "path": "/x", "captures": {"v": "a.b"}}],
                             "vars": {"k": "v"}})
    assert sc.steps[0].captures == {"v": "a.b"} and sc.vars == {"k": "v"}
    with pytest.raises(LoadgenConfigError, match="bad scenario"):
        Scenario.from_dict({"steps": [{"nam": "a"}]})
