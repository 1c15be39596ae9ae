"""pg8000, pure Python, DB-API interface."""

from __future__ import annotations

from typing import Any

import pg8000.dbapi

from dbstand.drivers import CONNECT_TIMEOUT_S
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


def connect(target: TargetURL, *, autocommit: bool = True) -> Any:
    e = endpoint(target)
    conn = pg8000.dbapi.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                                password=e.password, timeout=CONNECT_TIMEOUT_S)
    conn.autocommit = autocommit
    return conn
