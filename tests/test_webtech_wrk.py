"""dbstand's served figure against an independent client (issue 23): wrk, placed as the
placement table places dbstand's generator (on the client's CPUs, the stack on its own),
loads each stack of the webtech table at 1 and 4 keep-alive connections in turns with
dbstand's measurement of the same page; the two agree within 10%.

The runs are short (make test stays fast) and paired: each pair's two runs follow each
other (in alternating order), so a drift of the machine's load (other builds on a
2-core machine) hits both alike; the median of the pairs' ratios is compared."""

from __future__ import annotations

import re
import statistics
import subprocess

import pytest

from dbstand.modes.pinning import placed
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import get_manifest
from dbstand.targets.managed import ServerRecord
from dbstand.workloads.http_load import SEED, LoadPlan, measure
from dbstand.workloads.webtech.verify import SERVED

PREFIX = "dbstand_wrk_"
#: the issue's table: the limit row's file and each stack's hello
PAGES = {"static-nginx": "file", "php-apache-modphp": "hello",
         "java-tomcat-servlet": "hello", "go-nethttp": "hello",
         "python-flask-gunicorn": "hello"}
CLIENTS = (1, 4)
AGREE = 0.10
PAIRS = 5
RUN_S = 1  # wrk takes whole seconds


def wrk_rate(url: str, connections: int, seconds: int = RUN_S) -> float:
    """wrk's requests/s (it inherits this process's CPUs: the client's side)."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert "Non-2xx" not in out and "Socket errors" not in out, out
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    assert found, out
    return float(found.group(1))


@pytest.fixture(scope="module")
def world(mariadb: ServerRecord) -> ServerRecord:
    SERVED.prepare(mariadb.target(), PREFIX)
    return mariadb


@pytest.mark.parametrize("stack", list(PAGES))
def test_dbstand_agrees_with_wrk(stack: str, world: ServerRecord) -> None:
    manifest = get_manifest(stack, "webtech")
    with running_stack(manifest, target=world.target(), prefix=PREFIX, workers=max(CLIENTS),
                       static_dir=SERVED.static_dir) as handle:
        url = f"{handle.base_url}/{PAGES[stack]}"
        for n in CLIENTS:
            plan = LoadPlan(connections=n, duration_s=RUN_S, load=SEED, repeats=1,
                            warmup_requests=0, interval_s=0)
            ratios, pairs = [], []
            with placed({"stack": [handle.pid]}, plan.pin) as where:
                wrk_rate(url, n)  # warm-up
                for k in range(PAIRS):
                    if k % 2:
                        ours = measure(url, plan, handle.pid)
                        theirs = wrk_rate(url, n)
                    else:
                        theirs = wrk_rate(url, n)
                        ours = measure(url, plan, handle.pid)
                    assert ours["placement"]["cpus"] == where.cpus  # placed alike
                    ratios.append(ours["ops_per_s"] / theirs)
                    pairs.append((ours["ops_per_s"], theirs))
            assert abs(statistics.median(ratios) - 1) <= AGREE, (stack, n, pairs)
