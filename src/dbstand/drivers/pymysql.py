"""PyMySQL, pure Python (text protocol, client-side parameter interpolation)."""

from __future__ import annotations

from typing import Any

import pymysql

from dbstand.drivers import connect_timeout_s, read_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.drivers.mysql_greeting import check_greeting
from dbstand.targets.url import TargetURL


def connect(target: TargetURL, *, autocommit: bool = True, **options: Any) -> Any:
    e = endpoint(target, database_required=True)
    check_greeting(target, e)
    return pymysql.connect(host=e.host, port=e.port, user=e.user, password=e.password,
                           database=e.database, autocommit=autocommit,
                           connect_timeout=connect_timeout_s(), read_timeout=read_timeout_s(),
                           write_timeout=read_timeout_s(), charset="utf8mb4", **options)
