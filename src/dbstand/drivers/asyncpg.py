"""asyncpg (binary protocol, prepared statements)."""

from __future__ import annotations

from typing import Any

import asyncpg

from dbstand.drivers import connect_timeout_s, read_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


async def connect(target: TargetURL, **options: Any) -> asyncpg.Connection:
    e = endpoint(target)
    options.setdefault("command_timeout", read_timeout_s())
    return await asyncpg.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                                 password=e.password, timeout=connect_timeout_s(), **options)
