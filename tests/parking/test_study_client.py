"""The study's own kind of test program (tests/parking/study_client.py: a stand-alone
`unittest` client written from the spec, importing nothing from dbstand) run as a
separate process against every parking stack a manifest lists, on MariaDB (the
study's database): 5 of 5 tests pass on each. A service that keeps the old
pay_reservation order (cancelled checked before paid) fails it."""

from __future__ import annotations

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
