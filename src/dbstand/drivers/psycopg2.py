"""psycopg2 (libpq, client-side parameter interpolation)."""

from __future__ import annotations

from typing import Any

import psycopg2

from dbstand.drivers import connect_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


def connect(target: TargetURL, *, autocommit: bool = True) -> Any:
    e = endpoint(target)
    conn = psycopg2.connect(host=e.host, port=e.port, user=e.user, dbname=e.database,
                            password=e.password, connect_timeout=connect_timeout_s())
    conn.autocommit = autocommit
    return conn
