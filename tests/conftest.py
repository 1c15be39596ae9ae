"""Shared fixtures: real servers started through dbstand's own managed servers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dbstand.targets.managed import ServerRecord
from dbstand.targets.postgresql.managed import ManagedPostgres


@pytest.fixture(scope="session")
def pg() -> Iterator[ServerRecord]:
    """A throwaway PostgreSQL for the whole session, stopped at the end."""
    with ManagedPostgres() as record:
        yield record


@pytest.fixture(scope="session")
def pg_url(pg: ServerRecord) -> str:
    """The URL with its password, as a user would type it."""
    return pg.target().secret()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[ServerRecord]:
    """A throwaway MariaDB (Debian's mariadb-server) for the whole session."""
    from dbstand.targets.mysql.managed import ManagedMariaDB

    with ManagedMariaDB() as record:
        yield record


@pytest.fixture(scope="session")
def mariadb_url(mariadb: ServerRecord) -> str:
    return mariadb.target().secret()


@pytest.fixture(scope="session")
def tarantool_srv() -> Iterator[ServerRecord]:
    """A throwaway Tarantool (Debian's tarantool) with the kv study's settings."""
    from dbstand.targets.tarantool.managed import ManagedTarantool

    with ManagedTarantool() as record:
        yield record


@pytest.fixture(scope="session")
def tarantool_url(tarantool_srv: ServerRecord) -> str:
    return tarantool_srv.target().secret()


@pytest.fixture(autouse=True)
def dbstand_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
                 ) -> Path:
    """Keep dbstand's state (managed servers' records) out of the user's home."""
    home = tmp_path_factory.mktemp("dbstand-home")
    monkeypatch.setenv("DBSTAND_HOME", str(home))
    return home


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None, python_prelude: str = "") -> CliResult:
    """Run `dbstand ARGS` in a fresh interpreter, as a user would."""
    code = f"{python_prelude}\nfrom dbstand.cli.app import main\nmain()"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return run_cli
