"""Studies: each seed's matrix, run here and set beside what the seed published.

`dbstand study NAME` (studies/cli.py) starts the servers a study needs, runs its
matrix through the workload's own code, prints the seed's figures beside the
measured ones and checks each of the seed's claims. A study is a module here with
its matrix, settings and sizes (full, and `--quick` for laptops and CI), and a data
file in studies/data/ with the seed's numbers and claims.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dbstand.errors import UserError

if TYPE_CHECKING:
    from dbstand.studies.base import Study

#: study name -> (module, the seed it reproduces)
STUDIES: dict[str, tuple[str, str]] = {
    "kv": ("dbstand.studies.kv", "seed 004: Tarantool connectors, sync/coroutines/threads"),
    "batch": ("dbstand.studies.batch", "seed 002: psycopg2's batch APIs on openGauss"),
    "parking": ("dbstand.studies.parking", "seed 000: ORM layers in Python and C++"),
    "webtech": ("dbstand.studies.webtech", "seed 001: server technologies, 2002"),
    "docquery": ("dbstand.studies.docquery", "seed 003: PyMongo, Motor, MongoEngine"),
}


def get_study(name: str) -> Study:
    if name not in STUDIES:
        raise UserError(f"unknown study {name!r} (known: {', '.join(STUDIES)})")
    module = importlib.import_module(STUDIES[name][0])
    study: Study = module.STUDY()
    return study
