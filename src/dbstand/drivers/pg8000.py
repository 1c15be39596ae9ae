"""pg8000, pure Python, DB-API interface."""

from __future__ import annotations

import contextlib
from typing import Any

import pg8000.dbapi

from dbstand.drivers import connect_timeout_s, read_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


def connect(target: TargetURL, *, autocommit: bool = True) -> Any:
    e = endpoint(target)
    conn = pg8000.dbapi.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                                password=e.password, timeout=connect_timeout_s())
    # pg8000's `timeout` stays on its socket for every later read: widen it to the read
    # limit, or any statement longer than the connect limit would fail
    with contextlib.suppress(AttributeError, OSError):
        conn._usock.settimeout(read_timeout_s())
    conn.autocommit = autocommit
    return conn
