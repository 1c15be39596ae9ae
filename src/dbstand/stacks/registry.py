"""The registry of stacks: name, targets, packages, and where the adapter lives.

Adapters are imported lazily, so listing stacks or failing on an unknown one never
needs a driver to be installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from typing import Any

from dbstand.errors import MissingDependencyError, UserError


@dataclass(frozen=True)
class StackSpec:
    """A stack under test as users name it."""

    name: str
    targets: tuple[str, ...]          # target kinds it can talk to
    packages: tuple[str, ...]         # pip distributions it needs
    modules: tuple[str, ...]          # importable modules proving they are installed
    adapters: dict[str, str]          # workload -> "module:Class" implementing it
    description: str
    extra: str | None = None          # dbstand extra that installs it
    is_async: bool = False            # its operations are coroutines (asyncio modes)

    @property
    def workloads(self) -> tuple[str, ...]:
        return tuple(self.adapters)

    def missing_modules(self) -> list[str]:
        missing = []
        for module in self.modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                missing.append(module)
        return missing

    @property
    def installed(self) -> bool:
        return not self.missing_modules()

    def versions(self) -> dict[str, str]:
        out = {}
        for package in self.packages:
            try:
                out[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                out[package] = "builtin" if package == "sqlite3" else "missing"
        return out

    def require(self) -> None:
        """Raise one clear error if the driver is not importable."""
        missing = self.missing_modules()
        if missing:
            hint = f"pip install 'dbstand[{self.extra}]'" if self.extra else \
                f"pip install {' '.join(self.packages)}"
            raise MissingDependencyError(
                f"stack {self.name!r} needs {', '.join(self.packages)}, which is not "
                f"installed ({hint})")

    def load(self, workload: str) -> Any:
        """The adapter class implementing `workload` for this stack."""
        if workload not in self.adapters:
            raise UserError(f"stack {self.name!r} does not implement the {workload} workload "
                            f"(it does: {', '.join(self.adapters) or 'nothing yet'})")
        self.require()
        module_name, _, attr = self.adapters[workload].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise MissingDependencyError(
                f"stack {self.name!r} cannot load its driver: {exc}") from None
        return getattr(module, attr)


STACKS: dict[str, StackSpec] = {
    spec.name: spec
    for spec in (
        StackSpec("sqlite3", ("sqlite",), ("sqlite3",), ("sqlite3",),
                  {"kv": "dbstand.stacks.sqlite3_stack:Sqlite3Kv"},
                  "Python's built-in sqlite3 module (autocommit)"),
        StackSpec("psycopg", ("postgresql",), ("psycopg", "psycopg-binary"), ("psycopg",),
                  {"kv": "dbstand.stacks.psycopg_stack:PsycopgKv"},
                  "psycopg 3, C implementation; server-side prepare after 5 executions "
                  "(its default prepare_threshold)", extra="postgresql"),
        StackSpec("psycopg2", ("postgresql",), ("psycopg2-binary",), ("psycopg2",),
                  {"kv": "dbstand.stacks.psycopg2_stack:Psycopg2Kv"},
                  "psycopg2 (libpq, client-side parameter interpolation)",
                  extra="postgresql"),
        StackSpec("pg8000", ("postgresql",), ("pg8000",), ("pg8000",),
                  {"kv": "dbstand.stacks.pg8000_stack:Pg8000Kv"},
                  "pg8000, pure Python, DB-API interface (unnamed prepared statements)",
                  extra="postgresql"),
        StackSpec("pymysql", ("mysql",), ("PyMySQL",), ("pymysql",),
                  {},
                  "PyMySQL, pure Python MySQL/MariaDB driver", extra="mysql"),
        StackSpec("mysqlclient", ("mysql",), ("mysqlclient",), ("MySQLdb",),
                  {},
                  "mysqlclient (MySQLdb), C extension over libmariadb", extra="mysql"),
    )
}


def get_stack(name: str) -> StackSpec:
    try:
        return STACKS[name]
    except KeyError:
        raise UserError(f"unknown stack {name!r} (known: {', '.join(STACKS)})") from None


def register(spec: StackSpec) -> None:
    """Add a stack (used by modules that bring their own stacks)."""
    STACKS[spec.name] = spec
