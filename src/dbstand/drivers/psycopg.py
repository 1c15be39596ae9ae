"""psycopg 3 (libpq, C implementation): sync and asyncio connections."""

from __future__ import annotations

from typing import Any

import psycopg

from dbstand.drivers import connect_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


def _args(target: TargetURL) -> dict[str, Any]:
    e = endpoint(target)
    return {"host": e.host, "port": e.port, "user": e.user, "dbname": e.database,
            "password": e.password, "connect_timeout": connect_timeout_s()}


def connect(target: TargetURL, *, autocommit: bool = True, **options: Any) -> psycopg.Connection:
    return psycopg.connect(**_args(target), autocommit=autocommit, **options)


async def connect_async(target: TargetURL, *, autocommit: bool = True,
                        **options: Any) -> psycopg.AsyncConnection:
    return await psycopg.AsyncConnection.connect(**_args(target), autocommit=autocommit,
                                                 **options)
