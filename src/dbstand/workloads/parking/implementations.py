"""Where the Python implementations of the parking service live, and how the WSGI app
finds one.

Each implementation is a server stack's own code, in its stack's folder
(`stacks/python/python-raw/parking_raw.py`, `python-sqlalchemy/parking_sqlalchemy.py`,
`python-peewee/parking_peewee.py`), written the way its data-access layer is used in
real code (hand-written SQL, SQLAlchemy's ORM, Peewee): what a function reads, locks
and writes is its own. They share only what this workload defines for every
implementation: the spec's pure pricing rules (pricing.py, values.py), the protocol
(protocol.py), the checks and answers that need no database (checks.py), the request
cycle (functions.py) and the WSGI app (http.py). A stack folder is not a Python
package (its name has hyphens), so the module is loaded from its file; the PyPy stacks
load the same files (they run CPython's implementations).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from dbstand.errors import UserError
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking.functions import Service

#: the Python stacks' folder (dbstand/stacks/python), found from this file so that
#: PyPy, which has dbstand's package on its path but not its dependencies, needs no
#: manifest reader to find it
PYTHON_STACKS = Path(__file__).resolve().parents[2] / "stacks" / "python"

#: implementation name (DBSTAND_PARKING_IMPL: the CPython stack) -> (file, Service class)
IMPLEMENTATIONS = {
    "python-raw": ("parking_raw.py", "RawService"),
    "python-sqlalchemy": ("parking_sqlalchemy.py", "SqlAlchemyService"),
    "python-peewee": ("parking_peewee.py", "PeeweeService"),
}


def _known(implementation: str) -> tuple[str, str]:
    if implementation not in IMPLEMENTATIONS:
        raise UserError(f"unknown parking implementation {implementation!r} "
                        f"(known: {', '.join(IMPLEMENTATIONS)})")
    return IMPLEMENTATIONS[implementation]


def module_path(implementation: str) -> Path:
    """The implementation's file in its stack's folder."""
    return PYTHON_STACKS / implementation / _known(implementation)[0]


def load_module(implementation: str) -> ModuleType:
    """The implementation's module, imported once per process from its file."""
    name = "dbstand_parking_" + implementation.replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, module_path(implementation))
    if spec is None or spec.loader is None:
        raise UserError(f"cannot load the parking implementation {implementation!r} "
                        f"from {module_path(implementation)}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_service(implementation: str, target: TargetURL, prefix: str, *,
                 log_sql: bool = False, threads: int = 1) -> Service:
    """The Service of `implementation`, ready to serve (connections open lazily)."""
    cls = getattr(load_module(implementation), _known(implementation)[1])
    service: Service = cls(target, prefix, log_sql=log_sql, threads=threads)
    return service
