"""One module per implementation of the parking service; they differ in data access
only (the rules are in parking/logic.py)."""

from __future__ import annotations

import importlib

from dbstand.errors import UserError
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking.repo import Backend

#: stack name -> "module:Class" of its Backend
IMPLEMENTATIONS = {
    "python-raw": "dbstand.workloads.parking.service.raw:RawBackend",
    "python-sqlalchemy": "dbstand.workloads.parking.service.sqlalchemy_orm:SqlAlchemyBackend",
    "python-peewee": "dbstand.workloads.parking.service.peewee_orm:PeeweeBackend",
}


def load_backend(stack: str, target: TargetURL, prefix: str, *, log_sql: bool = False,
                 threads: int = 1) -> Backend:
    """The Backend of `stack`, ready to serve (connections open lazily per thread)."""
    if stack not in IMPLEMENTATIONS:
        raise UserError(f"unknown parking stack {stack!r} (known: {', '.join(IMPLEMENTATIONS)})")
    module_name, _, name = IMPLEMENTATIONS[stack].partition(":")
    cls = getattr(importlib.import_module(module_name), name)
    return cls(target, prefix, log_sql=log_sql, threads=threads)
