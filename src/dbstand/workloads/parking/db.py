"""DB-API connections for the parking service and its schema management.

One place opens the driver a target needs (sqlite3, psycopg 3 or pg8000, PyMySQL) in
autocommit, so that transactions are explicit; connection failures become one
clear TargetError.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dbstand.errors import MissingDependencyError, TargetError, UserError
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.url import TargetURL

PARAMSTYLES = {"sqlite": "qmark", "postgresql": "format", "mysql": "format"}
KINDS = tuple(PARAMSTYLES)


def check_target(target: TargetURL) -> None:
    """Refuse targets the service cannot use, before anything starts."""
    if target.kind not in PARAMSTYLES:
        raise UserError(f"the parking service runs on {', '.join(KINDS)} targets, "
                        f"not {target.kind} ({target.redacted()})")
    if target.is_memory:
        raise UserError("the parking service runs in its own process: use a SQLite file "
                        "(sqlite:///path.db), not an in-memory database")


def sqlite_path(target: TargetURL) -> str:
    """The absolute path of a SQLite target (the server process may run elsewhere)."""
    path = Path(target.database or "").expanduser().resolve()
    if not path.parent.is_dir():
        raise TargetError(f"cannot use {target}: directory {path.parent} does not exist")
    return str(path)


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


#: the driver the service uses per kind (its data access is the stacks' own code)
DRIVERS = {"sqlite": "sqlite3", "postgresql": "psycopg", "mysql": "pymysql"}
#: names another PostgreSQL driver for the service process (PyPy: pg8000, pure Python)
PG_DRIVER_ENV = "DBSTAND_PARKING_PG_DRIVER"
PG_DRIVERS = ("psycopg", "pg8000")


def driver_name(kind: str) -> str:
    """The driver module (in dbstand.drivers) the service uses for `kind`."""
    if kind == "postgresql":
        chosen = os.environ.get(PG_DRIVER_ENV) or DRIVERS[kind]
        if chosen not in PG_DRIVERS:
            raise UserError(f"{PG_DRIVER_ENV} must be one of {', '.join(PG_DRIVERS)}, "
                            f"not {chosen!r}")
        return chosen
    return DRIVERS[kind]


def _open(target: TargetURL) -> Any:
    import importlib

    driver = importlib.import_module(f"dbstand.drivers.{driver_name(target.kind)}")
    if target.kind == "sqlite":  # concurrent writers wait for the lock, up to 30 s
        return driver.connect(target, busy_timeout_ms=30_000)
    return driver.connect(target)
