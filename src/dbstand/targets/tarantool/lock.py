"""Tarantool's run lock: an entry in a Lua table on the instance naming the holder's
session, free again once that session no longer exists."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dbstand.targets.run_lock import busy
from dbstand.targets.url import TargetURL

_TARANTOOL_TAKE = """
local name = ...
_G.dbstand_run_locks = _G.dbstand_run_locks or {}
local holder = _G.dbstand_run_locks[name]
if holder ~= nil and holder ~= box.session.id() and box.session.exists(holder) then
    return holder
end
_G.dbstand_run_locks[name] = box.session.id()
return 0
"""

_TARANTOOL_RELEASE = """
local name = ...
local locks = _G.dbstand_run_locks
if locks ~= nil and locks[name] == box.session.id() then locks[name] = nil end
"""


@contextlib.contextmanager
def hold(target: TargetURL, prefix: str, connect: Callable[[], Any]) -> Iterator[None]:
    """`connect()`: the admin kv client (its `conn` is the connector's connection)."""
    client = connect()
    conn = client.conn
    name = f"{target.database or ''}:{prefix}"
    try:
        holder = conn.eval(_TARANTOOL_TAKE, name).data[0]
        if holder:
            raise busy(target, prefix, f"held by session {holder}")
        yield
        with contextlib.suppress(Exception):
            conn.eval(_TARANTOOL_RELEASE, name)
    finally:
        with contextlib.suppress(Exception):
            client.close()
