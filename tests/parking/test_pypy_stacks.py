"""The PyPy parking stacks (stacks/python/pypy-sqlalchemy, pypy-raw): dbstand's own
Python implementations run by Debian's pypy3 in a PyPy venv their build makes, with
pure-Python drivers (PyMySQL, pg8000), pass the conformance suite on real SQLite,
PostgreSQL and MariaDB through `dbstand stack check` (built once, then cached)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking import db, schema

PYPY_STACKS = ("pypy-sqlalchemy", "pypy-raw")
PREFIX = "dbs_pypy_"



@pytest.mark.timeout(900)  # a first build makes a PyPy venv and installs into it
@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
@pytest.mark.parametrize("stack", PYPY_STACKS)
def test_pypy_stack_conforms(stack: str, kind: str, cli, request: pytest.FixtureRequest,
                             tmp_path: Path) -> None:
    url = (f"sqlite:///{tmp_path / 'p.db'}" if kind == "sqlite" else
           request.getfixturevalue("pg_url" if kind == "postgresql" else "mariadb_url"))
    try:
        result = cli("verify", "parking", "--stack", stack, "--target", url, "--prefix",
                     PREFIX)
        assert result.code == 0, result.stdout + result.stderr
        for scenario in ("prepaid", "postpaid", "refunds", "transfers", "versions"):
            assert scenario in result.stdout
        assert "totals: PASS" in result.stdout and "FAIL" not in result.stdout
    finally:
        with closing(db.connect(parse_target_url(url))) as conn:
            schema.drop_schema(conn, PREFIX)


def test_pypy_service_never_writes_beside_its_sources() -> None:
    """PyPy's bytecode cache goes to the build dir (PYTHONPYCACHEPREFIX), not into
    dbstand's package."""
    package = Path(schema.__file__).resolve().parents[2]
    assert not list(package.rglob("*.pypy39.pyc"))
