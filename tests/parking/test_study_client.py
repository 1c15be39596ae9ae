"""The study's own kind of test program (tests/parking/study_client.py: a stand-alone
`unittest` client written from the spec, importing nothing from dbstand) run as a
separate process against every parking stack a manifest lists, on MariaDB (the
study's database): 5 of 5 tests pass on each. A service that keeps the old
pay_reservation order (cancelled checked before paid) fails it. Its identities are
unique by construction (a per-process serial), not drawn at random."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking.app import parking_stacks, running_service

CLIENT = Path(__file__).with_name("study_client.py")


def _run_client(base_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CLIENT), "-u", base_url, "-v"],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.timeout(900)  # a first build of a Go, C++ or PyPy stack takes minutes
@pytest.mark.parametrize("stack", parking_stacks("mysql"))
def test_study_client_passes_on_every_stack(stack: str, mariadb_url: str) -> None:
    with running_service(stack, parse_target_url(mariadb_url), threads=2) as service:
        done = _run_client(service.base_url)
    assert done.returncode == 0, done.stderr
    assert "Ran 5 tests" in done.stderr and done.stderr.rstrip().endswith("OK"), done.stderr


def test_study_client_fails_the_old_pay_order(tmp_path: Path) -> None:
    target = parse_target_url(f"sqlite:///{tmp_path / 'p.db'}")
    with running_service("python-raw", target, broken="cancelled-before-paid") as service:
        done = _run_client(service.base_url)
    assert done.returncode == 1, done.stderr
    assert "Ran 5 tests" in done.stderr and "FAILED (failures=1)" in done.stderr, done.stderr
    assert "test_prepaid_session" in done.stderr and "'bad_transaction' != 'success'" \
        in done.stderr, done.stderr


#: draws each of two client processes makes of every kind of identity
DRAWS = 3000
_DRAW = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("study_client", sys.argv[1])
client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(client)
client.random.seed(7)  # both processes draw the same random parts
case = client.ParkingTestCase
print(json.dumps({kind: [getattr(case, kind)() for _ in range({n})]
                  for kind in ("user", "plate", "trans")}))
"""


def test_study_client_ids_are_unique_by_construction() -> None:
    """Two client processes' users, plates and transaction ids, their random parts
    drawn from the same seed: none repeats, within a process or across both (the
    serial, not luck, makes them unique), all within the spec's sizes. The client
    drew users from 2**31 at random before, which met ids left in the same tables by
    earlier runs."""
    drawn = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _DRAW.replace("{n}", str(DRAWS)),
                               str(CLIENT)], capture_output=True, text=True, timeout=60,
                              check=True)
        drawn.append(json.loads(done.stdout))
    for kind, longest in (("user", 64), ("plate", 32), ("trans", 64)):
        ids = drawn[0][kind] + drawn[1][kind]
        assert len(set(ids)) == 2 * DRAWS, kind
        assert all(4 <= len(i) <= longest for i in ids), (kind, max(ids, key=len))
    assert all(u.isdigit() for u in drawn[0]["user"] + drawn[1]["user"])


def test_study_client_passes_twice_on_one_database(tmp_path: Path) -> None:
    """The real service takes the client's ids: two runs on the same tables, 5 of 5
    each (the second meets every row the first left)."""
    target = parse_target_url(f"sqlite:///{tmp_path / 'p.db'}")
    with running_service("python-raw", target) as service:
        for _ in range(2):
            done = _run_client(service.base_url)
            assert done.returncode == 0, done.stderr
            assert "Ran 5 tests" in done.stderr and done.stderr.rstrip().endswith("OK")
