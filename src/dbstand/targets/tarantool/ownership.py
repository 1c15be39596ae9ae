"""Spaces dbstand owns on a Tarantool instance, and the refusal to touch any other.

The same rule as sql/ownership.py: a registry space (`<prefix>owned`) lists the
spaces dbstand created; dbstand drops or refills a space only if the registry names
it. A space with a dbstand-like name that the registry does not list belongs to
someone else and is refused. Everything runs as Lua through `eval` (the user needs
execute, create and drop grants; the managed instance's `dbstand` user has them).

The registry is recognised by a mark, not by its format: dbstand puts a tuple
naming the registry itself (workload `REGISTRY_MARK`) in it when it creates it.
Registries of older versions, without the mark, are read only when they hold tuples
and every one is a tuple dbstand writes (targets/prefix.py's `legacy_rows_ok`).
"""

from __future__ import annotations

import time
from typing import Any

from dbstand.errors import OwnershipError
from dbstand.targets.prefix import check_prefix, legacy_rows_ok, not_our_registry, not_ours

REGISTRY_FORMAT = ("name", "workload", "created_at")
REGISTRY_MARK = "dbstand-registry"

_EXISTS = "return box.space[...] ~= nil"

#: "absent", "marked", or "unmarked" with the tuples (an older registry, or not ours)
_REGISTRY_STATE = """
local registry, mark = ...
local s = box.space[registry]
if s == nil then return 'absent', {} end
local f = s:format()
if not (#f >= 3 and f[1].name == 'name' and f[2].name == 'workload'
        and f[3].name == 'created_at') or s.index[0] == nil then
    return 'unmarked', {}
end
local own = s:get(registry)
if own ~= nil and own[2] == mark then return 'marked', {} end
local rows = {}
for _, t in s:pairs() do
    table.insert(rows, {t[1], t[2], t[3]})
    if #rows > 10000 then break end
end
return 'unmarked', rows
"""

_OWNS = """
local registry, name = ...
local s = box.space[registry]
return name ~= registry and s ~= nil and s:get(name) ~= nil
"""

_ENSURE_REGISTRY = """
local registry, mark, stamp = ...
local s = box.schema.space.create(registry, {if_not_exists = true, format = {
    {name = 'name', type = 'string'}, {name = 'workload', type = 'string'},
    {name = 'created_at', type = 'string'}}})
s:create_index('primary', {parts = {{1, 'string'}}, if_not_exists = true})
if s:get(registry) == nil then s:replace({registry, mark, stamp}) end
"""

_CREATE_KV = """
local registry, name, options, workload, stamp = ...
if box.space[name] ~= nil then box.space[name]:drop() end
options.format = {{name = 'id', type = 'unsigned'}, {name = 'name', type = 'string'}}
local s = box.schema.space.create(name, options)
-- a sequence on the primary key: inserts without an id get the next one
s:create_index('primary', {parts = {{1, 'unsigned'}}, sequence = true})
box.space[registry]:replace({name, workload, stamp})
return s.id
"""

_DROP = """
local registry, name = ...
if box.space[name] ~= nil then box.space[name]:drop() end
local r = box.space[registry]
r:delete(name)
local n = r:count()
if n == 0 or (n == 1 and r:get(registry) ~= nil) then r:drop() end
"""


class TarantoolOwnership:
    """Creates and drops the spaces of one prefix through a `tarantool` connection."""

    def __init__(self, conn: Any, prefix: str):
        self.conn = conn
        self.prefix = check_prefix(prefix)
        self.registry = f"{prefix}owned"

    def _eval(self, lua: str, *args: Any) -> list[Any]:
        return list(self.conn.eval(lua, *args).data)

    def exists(self, space: str) -> bool:
        return bool(self._eval(_EXISTS, space)[0])

    def owns(self, space: str) -> bool:
        self._check_registry()
        return bool(self._eval(_OWNS, self.registry, space)[0])

    def _check_registry(self) -> None:
        state, rows = self._eval(_REGISTRY_STATE, self.registry, REGISTRY_MARK)[:2]
        if state == "unmarked" and not legacy_rows_ok([tuple(r) for r in rows or []],
                                                       self.prefix):
            raise not_our_registry("space", self.registry)

    def check(self, space: str) -> None:
        """Refuse early (before any run starts) if `space` is someone else's."""
        self._check_registry()
        if self.exists(space) and not self.owns(space):
            raise not_ours("space", space)

    def create_kv(self, space: str, options: dict[str, Any], workload: str = "kv") -> int:
        """(Re)create the kv space with `options` (engine, temporary...); return its id."""
        if not space.startswith(self.prefix):
            raise OwnershipError(f"refusing to create {space}: not under prefix {self.prefix}")
        if space == self.registry:
            raise OwnershipError(f"refusing to create {space}: it is dbstand's registry")
        self.check(space)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self._eval(_ENSURE_REGISTRY, self.registry, REGISTRY_MARK, stamp)
        return int(self._eval(_CREATE_KV, self.registry, space, dict(options), workload,
                              stamp)[0])

    def drop(self, space: str) -> None:
        """Drop a space dbstand owns; drop the registry too once it is empty."""
        if not self.owns(space):
            raise OwnershipError(f"refusing to drop {space}: dbstand did not create it")
        self._eval(_DROP, self.registry, space)
