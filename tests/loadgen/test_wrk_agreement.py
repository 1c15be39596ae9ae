"""dbstand's served figure against wrk (issue 23; the other independent count, the
server's own bytes written, is test_served_bytes.py's: a count, not a rate, it needs
no quiet machine).

Both generators run the same closed keep-alive load, pinned to the client's CPU of
the `separate` placement (generator on one CPU, stack on the other; on one shared CPU
every microsecond a generator spends per request is taken from the server, so there the
figure is the generators' own efficiency: commit 1a22209). This machine's CPU speed
varies by about 20% (docs/machine-speed.md), so the two alternate in pairs and the
median of the pairs' ratios is held. How many pairs follows the methodology's stop
rule: at least 4, more (up to 12) while the 95% interval of the pairs' ratio does not
yet satisfy the claim. Four were too few on a shared machine: there a pair's ratio
spreads by about 18% (Go's hello at 4 connections, 12 interleaved pairs on 2026-11-27,
load 3-4: geometric mean 0.984, pairs from 0.69 to 1.34), so the median of four fell
outside 10% in about one run in four (resampled) with no difference between the
generators; one make test run read 0.83-0.92 in all four. On a quiet machine the
interval is narrow after four pairs and nothing changes. What is held depends on what
limits the rate:
- the server (Go's hello at 4 connections): the two agree within 10%;
- the round trip (1 connection: one request in flight, the rate is one over the whole
  round trip, the generator's part included): the engine is not slower than wrk by
  more than 10%. It may be faster: its io_uring loop sends and waits in one system call
  where wrk's epoll loop makes several, and on a quiet machine (CI, 2026-11-26) it read
  7-22% above wrk at 1 connection on both stacks, a gap of the generators, not of the
  server;
- the generator's own CPU (nginx's file at 4 connections): not compared; the engine
  reads about 12% below wrk there (docs/placement.md), a known gap of its own.
"""

from __future__ import annotations

import math
import re
import statistics
import subprocess

import pytest

from dbstand.engine.stats import summarize
from dbstand.modes.pinning import placed
from dbstand.stacks.launcher import StackHandle
from dbstand.workloads.http_load import SEED, LoadPlan, measure

from .conftest import PAGES

pytestmark = pytest.mark.exclusive  # figures measured here are compared

PLACEMENT = "separate"
AGREE = 0.10
PAIRS = 4  # at least
MAX_PAIRS = 12  # at most: at that spread, twelve put the median outside 10% in 1 run of 40
RUN_S = 1  # wrk takes whole seconds


def wrk_rate(url: str, connections: int) -> float:
    """wrk's requests/s; it inherits this process's CPUs (the client's, once placed)."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{RUN_S}s", url],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert "Non-2xx" not in out and "Socket errors" not in out, out
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    assert found, out
    return float(found.group(1))


#: what limits the rate under `separate` (measured: the module's docstring)
SERVER_BOUND = {("go-nethttp", 4)}
GENERATOR_BOUND = {("static-nginx", 4)}
COMPARED = [(name, n) for name in PAGES for n in (1, 4) if (name, n) not in GENERATOR_BOUND]


def interval(ratios: list[float]) -> tuple[float, float]:
    """95% interval of the pairs' ratio (geometric mean: a ratio's noise is a factor)."""
    s = summarize([math.log(r) for r in ratios])
    return math.exp(s.mean - s.ci95_half), math.exp(s.mean + s.ci95_half)


def settled(server_bound: bool, ratios: list[float]) -> bool:
    """Whether the pairs so far are enough: their interval satisfies the claim."""
    if len(ratios) < PAIRS:
        return False
    low, high = interval(ratios)
    return low >= 1 - AGREE and (high <= 1 + AGREE or not server_bound)


@pytest.mark.parametrize(("webtech_page", "connections"), COMPARED,
                         indirect=["webtech_page"])
def test_engine_agrees_with_wrk(webtech_page: tuple[StackHandle, str],
                                connections: int) -> None:
    handle, url = webtech_page
    plan = LoadPlan(connections=connections, duration_s=RUN_S, load=SEED, repeats=1,
                    warmup_requests=0, interval_s=0, placement=PLACEMENT)
    server_bound = (handle.manifest.name, connections) in SERVER_BOUND
    ratios: list[float] = []
    pairs: list[tuple[int, int]] = []
    with placed({"stack": [handle.pid]}, placement=PLACEMENT) as where:
        assert set(where.cpus["client"]).isdisjoint(where.cpus["stack"]), where.cpus
        wrk_rate(url, connections)  # warm-up for both
        for k in range(MAX_PAIRS):
            if k % 2:
                ours = measure(url, plan, handle.pid)
                theirs = wrk_rate(url, connections)
            else:
                theirs = wrk_rate(url, connections)
                ours = measure(url, plan, handle.pid)
            assert ours["placement"]["cpus"] == where.cpus  # both generators placed alike
            ratios.append(ours["ops_per_s"] / theirs)
            pairs.append((round(ours["ops_per_s"]), round(theirs)))
            if settled(server_bound, ratios):
                break
    ratio = statistics.median(ratios)
    seen = (connections, url, pairs, [round(x, 3) for x in interval(ratios)])
    if server_bound:
        assert abs(ratio - 1) <= AGREE, seen
    else:  # round-trip bound: the engine's own part of the round trip may be smaller
        assert ratio >= 1 - AGREE, seen
