"""Database kinds: each folder `targets/<kind>/` holds a `kind.py` with one `KIND`
descriptor, and nothing outside the folder keys on the kind's name.

A descriptor is data plus `module:attr` paths, so reading every kind (to parse a URL
or print help) imports no driver. Adding a database kind is adding a folder.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from dbstand.errors import UserError


@dataclass(frozen=True)
class TargetKind:
    """What dbstand knows of one kind of database."""

    name: str                       # the kind, as in TargetURL.kind
    title: str                      # "PostgreSQL", "MariaDB/MySQL"
    schemes: tuple[str, ...]        # URL schemes that mean this kind (first: canonical)
    default_port: int | None = None
    default_user: str | None = None
    embedded: bool = False          # runs inside the client process (SQLite)
    #: sync stacks able to open an admin connection (untimed data management,
    #: counters), first installed wins
    admin_stacks: tuple[str, ...] = ()
    managed: str | None = None      # "module:Class" of its ManagedServer
    #: its server-side statement counter, by name (probes/statements.py COUNTERS)
    statements: str | None = None
    ownership: str = "sql"          # "sql" (the <prefix>owned table) or "module:Class"
    #: "module:function" of its run lock (targets/run_lock.py), None: runs unlocked
    run_lock: str | None = None
    #: the SQL dialect it speaks (sql/dialects.py), None for a non-SQL kind: a kind that
    #: speaks another's wire protocol and SQL (CockroachDB: postgresql) reuses its code
    dialect: str | None = None
    #: the DB-API paramstyle of its service drivers (sql/paramstyle.py), None: not SQL
    paramstyle: str | None = None
    #: per workload, the stacks a run uses when --stack is not given (those installed)
    default_stacks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    speaks_first: bool = False      # the server greets on connect (MySQL, Tarantool)
    greeting: str | None = None     # "module:function(bytes) -> bool": is this our server

    def load(self, attr: str) -> Any:
        """Import one of the descriptor's `module:attr` paths."""
        path = getattr(self, attr)
        if not path:
            raise UserError(f"{self.title} targets have no {attr.replace('_', ' ')}")
        module, _, name = path.partition(":")
        return getattr(importlib.import_module(module), name)


@functools.cache
def all_kinds() -> dict[str, TargetKind]:
    """Every kind, discovered from the `targets/<kind>/kind.py` modules."""
    import dbstand.targets as package

    kinds: dict[str, TargetKind] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"dbstand.targets.{info.name}.kind")
        except ModuleNotFoundError:
            continue
        kind: TargetKind = module.KIND
        kinds[kind.name] = kind
    return kinds


def get_kind(name: str) -> TargetKind:
    kinds = all_kinds()
    if name not in kinds:
        raise UserError(f"unknown database kind {name!r} (known: {', '.join(kinds)})")
    return kinds[name]


def schemes() -> dict[str, str]:
    """URL scheme as typed -> kind."""
    return {scheme: kind.name for kind in all_kinds().values() for scheme in kind.schemes}


def managed_kinds() -> dict[str, TargetKind]:
    """Kinds dbstand can start a throwaway server of, by every name a user may type."""
    out: dict[str, TargetKind] = {}
    for kind in all_kinds().values():
        if kind.managed:
            for alias in (kind.name, *kind.schemes):
                out.setdefault(alias, kind)
    return out
