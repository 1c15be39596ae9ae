"""asyncpg (binary protocol, prepared statements)."""

from __future__ import annotations

from typing import Any

import asyncpg

from dbstand.drivers import CONNECT_TIMEOUT_S
from dbstand.drivers.endpoint import endpoint
from dbstand.targets.url import TargetURL


async def connect(target: TargetURL, **options: Any) -> asyncpg.Connection:
    e = endpoint(target)
    return await asyncpg.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                                 password=e.password, timeout=CONNECT_TIMEOUT_S, **options)
