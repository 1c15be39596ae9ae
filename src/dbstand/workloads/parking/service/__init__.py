"""One module per Python implementation of the parking service. Each one is written
the way its data-access layer is used in real code (hand-written SQL, SQLAlchemy's
ORM, Peewee): what a function reads, locks and writes is its own. They share only
the spec's pure pricing rules (pricing.py, values.py), the request cycle
(functions.py) and the conformance suite."""

from __future__ import annotations

import importlib

from dbstand.errors import UserError
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking.functions import Service

#: implementation name (DBSTAND_PARKING_IMPL) -> "module:Class" of its Service
IMPLEMENTATIONS = {
    "python-raw": "dbstand.workloads.parking.service.raw:RawService",
    "python-sqlalchemy": "dbstand.workloads.parking.service.sqlalchemy_orm:SqlAlchemyService",
    "python-peewee": "dbstand.workloads.parking.service.peewee_orm:PeeweeService",
}


def load_service(implementation: str, target: TargetURL, prefix: str, *,
                 log_sql: bool = False, threads: int = 1) -> Service:
    """The Service of `implementation`, ready to serve (connections open lazily)."""
    if implementation not in IMPLEMENTATIONS:
        raise UserError(f"unknown parking implementation {implementation!r} "
                        f"(known: {', '.join(IMPLEMENTATIONS)})")
    module_name, _, name = IMPLEMENTATIONS[implementation].partition(":")
    cls = getattr(importlib.import_module(module_name), name)
    service: Service = cls(target, prefix, log_sql=log_sql, threads=threads)
    return service
