"""The one load path of served workloads (workloads/http_load.py) against a real nginx:
the steady load (warm-up until steady, runs of a minimum time, kv's stop rule) and the
seed's literal load, both placed by the placement table."""

from __future__ import annotations

import os

import pytest

from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT, cpus_for
from dbstand.workloads.http_load import SEED, LoadPlan, check_load, measure, served_config

from .conftest import Nginx


def test_steady_load_warms_up_runs_long_enough_and_stops_by_the_rule(nginx: Nginx) -> None:
    pid = int((nginx.prefix / "nginx.pid").read_text())
    plan = LoadPlan(connections=2, requests=50, repeats=3, max_repeats=5, min_run_s=0.3,
                    warmup_s=0.6, max_warmup_s=1.5, warmup_step_s=0.3, interval_s=0,
                    target_ci_pct=3.0)
    m = measure(nginx.url(), plan, pid)
    warm = m["warmup"]
    assert 0.6 <= warm["s"] <= 1.5 + 0.5 and warm["steps"] == len(warm["rates"]) >= 2
    assert 3 <= m["repeats"] <= 5 and all(s >= 0.3 for s in m["run_s"])
    assert m["requests"] >= 50 * m["repeats"]  # the seed's count stays the least
    # unstable exactly when the cap stopped it, never when the interval was reached
    assert m["stop_reason"] in ("ci", "max-iterations", "max-time")
    assert m["unstable"] == (m["stop_reason"] != "ci")
    if m["stop_reason"] == "ci":
        assert m["ci95_pct"] <= 3.0
    else:
        assert m["repeats"] == 5 or m["stop_reason"] == "max-time"
    where = m["placement"]
    if len(os.sched_getaffinity(0)) >= 2:
        assert where["enabled"] and where["placement"] == DEFAULT_PLACEMENT
        assert where["cpus"] == {"client": cpus_for("client"), "stack": cpus_for("stack")}
    assert m["load"]["load"] == "steady" and m["load"]["min_run_s"] == 0.3


def test_seed_load_is_the_literal_count(nginx: Nginx) -> None:
    pid = int((nginx.prefix / "nginx.pid").read_text())
    plan = LoadPlan(connections=1, requests=40, repeats=3, load=SEED, interval_s=0)
    m = measure(nginx.url(), plan, pid)
    assert m["repeats"] == 3 and m["requests"] == 120
    assert m["warmup"] == {"requests": 1, "rate": None}
    assert m["load"]["load"] == SEED and m["load"]["warmup_requests"] == 1


def test_load_names_and_settings() -> None:
    with pytest.raises(UserError, match="--load takes steady or seed"):
        check_load("literal")
    seed, steady = served_config("seed", 3, 3.0), served_config("steady", 5, 3.0, 30)
    assert seed.min_iterations == seed.max_iterations == 3
    assert (steady.min_iterations, steady.max_iterations, steady.target_ci_pct) == (5, 30, 3.0)
