"""aiomysql: PyMySQL's protocol on asyncio."""

from __future__ import annotations

from typing import Any

import aiomysql

from dbstand.drivers import connect_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.drivers.mysql_greeting import check_greeting
from dbstand.targets.url import TargetURL


async def connect(target: TargetURL, *, autocommit: bool = True) -> Any:
    e = endpoint(target, database_required=True)
    check_greeting(target, e)
    return await aiomysql.connect(host=e.host, port=e.port, user=e.user, password=e.password,
                                  db=e.database, autocommit=autocommit,
                                  connect_timeout=connect_timeout_s(), charset="utf8mb4")
