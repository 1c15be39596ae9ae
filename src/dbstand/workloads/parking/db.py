"""DB-API connections for the parking service and its schema management.

One place opens the driver a target needs (sqlite3, psycopg 3 or pg8000, PyMySQL) in
autocommit, so that transactions are explicit; connection failures become one
clear TargetError.
"""

from __future__ import annotations

import os
from typing import Any

from dbstand.errors import MissingDependencyError, TargetError, UserError
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL


def paramstyle(kind: str) -> str:
    """The paramstyle of the service's driver for `kind` (the kind's descriptor)."""
    style = get_kind(kind).paramstyle
    if style is None:
        raise UserError(f"the parking service runs on SQL targets, not {kind}")
    return style


def check_target(target: TargetURL) -> None:
    """Refuse targets the service cannot use, before anything starts."""
    if get_kind(target.kind).paramstyle is None:
        raise UserError(f"the parking service runs on SQL targets (SQLite, PostgreSQL, "
                        f"MariaDB/MySQL), not {target.kind} ({target.redacted()})")
    if target.is_memory:
        raise UserError("the parking service runs in its own process: use a SQLite file "
                        "(sqlite:///path.db), not an in-memory database")


def connect(target: TargetURL) -> Any:
    """An autocommit DB-API connection to `target` (explicit BEGIN/COMMIT)."""
    check_target(target)
    try:
        return _open(target)
    except TargetError:
        raise
    except ImportError as exc:
        raise MissingDependencyError(f"the parking service on {target.kind} needs {exc.name}, "
                                     "which is not installed") from None
    except Exception as exc:  # drivers raise their own hierarchies
        raise connect_error(exc, target) from None


#: names another PostgreSQL driver for the service process (PyPy: pg8000, pure Python)
PG_DRIVER_ENV = "DBSTAND_PARKING_PG_DRIVER"
PG_DRIVERS = ("psycopg", "pg8000")


def driver_name(kind: str) -> str:
    """The driver module (in dbstand.drivers) the service uses for `kind`: the kind's
    first admin driver (sqlite3, psycopg, pymysql); PG_DRIVER_ENV may name another of
    PG_DRIVERS where that one is the default."""
    default = get_kind(kind).admin_stacks[0]
    if default == PG_DRIVERS[0]:
        chosen = os.environ.get(PG_DRIVER_ENV) or default
        if chosen not in PG_DRIVERS:
            raise UserError(f"{PG_DRIVER_ENV} must be one of {', '.join(PG_DRIVERS)}, "
                            f"not {chosen!r}")
        return chosen
    return default


def _open(target: TargetURL) -> Any:
    import importlib

    driver = importlib.import_module(f"dbstand.drivers.{driver_name(target.kind)}")
    if get_kind(target.kind).embedded:  # concurrent writers wait for the lock, up to 30 s
        return driver.connect(target, busy_timeout_ms=30_000)
    return driver.connect(target)
