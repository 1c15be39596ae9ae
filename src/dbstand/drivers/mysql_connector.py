"""Oracle's mysql-connector-python (C extension if it loads, else pure Python)."""

from __future__ import annotations

from typing import Any

import mysql.connector

from dbstand.drivers import connect_timeout_s, read_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.drivers.mysql_greeting import check_greeting
from dbstand.targets.url import TargetURL


def connect(target: TargetURL, *, autocommit: bool = True, **options: Any) -> Any:
    e = endpoint(target, database_required=True)
    check_greeting(target, e)
    options.setdefault("read_timeout", read_timeout_s())
    options.setdefault("write_timeout", read_timeout_s())
    return mysql.connector.connect(host=e.host, port=e.port, user=e.user, password=e.password,
                                   database=e.database, autocommit=autocommit,
                                   connection_timeout=connect_timeout_s(), charset="utf8mb4",
                                   **options)
