"""tarantool-python, the official pure-Python Tarantool connector.

Two protocols (specs/kv.md): `binary`, the space requests of the IPROTO protocol
(select/insert/update/upsert/replace/delete), and `sql`, the same operations as SQL
through `Connection.execute`. tarantool-python 1.3 has no prepare API, so every SQL
request carries its text (the result records say so).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any, TypeVar

import tarantool
from tarantool.error import DatabaseError

from dbstand.drivers.endpoint import endpoint
from dbstand.errors import CaseFailed, TargetError
from dbstand.sql.bulk import CHUNK, Loaded, Progress
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.greeting import first_bytes, is_tarantool, what_answers
from dbstand.targets.managed import password_for, record_for
from dbstand.targets.tarantool.managed import server_facts, space_options
from dbstand.targets.tarantool.ownership import TarantoolOwnership
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import ConnKvClient, Op

GREETING_TIMEOUT_S = 5.0
#: tuples per server-side insert call while filling (one transaction each)
FILL_CHUNK = 20_000
T = TypeVar("T")

#: how each operation is spelled, per protocol
FORMS = {
    "binary": {
        "select": "space:select by primary key",
        "insert": "space:insert{nil, name} (id from the space's sequence)",
        "update": "space:update(id, {{'=', 2, name}})",
        "upsert": "space:upsert", "replace": "space:replace", "delete": "space:delete",
    },
    "sql": {
        "select": "SELECT ... WHERE id = ?", "insert": "INSERT (name) (id from the sequence)",
        "update": "UPDATE ... WHERE id = ?",
        "upsert": "no SQL upsert in Tarantool: UPDATE, then INSERT if no row matched",
        "replace": "REPLACE INTO", "delete": "DELETE ... WHERE id = ?",
    },
}

_FILL = """
local s, rows = box.space[select(1, ...)], select(2, ...)
box.begin()
for _, t in ipairs(rows) do s:insert(t) end
box.commit()
"""

_DELETE_ABOVE = """
local s, max_id = box.space[select(1, ...)], select(2, ...)
local keys = {}
for _, t in s:pairs(max_id, {iterator = 'GT'}) do keys[#keys + 1] = t[1] end
for _, k in ipairs(keys) do s:delete(k) end
return #keys
"""

_NAMES = """
local s, keys = box.space[select(1, ...)], select(2, ...)
local out = {}
for _, k in ipairs(keys) do
    local t = s:get(k)
    if t ~= nil then out[#out + 1] = {t[1], t[2]} end
end
return out
"""


class TarantoolKv(ConnKvClient):
    """kv on a Tarantool space, through the binary protocol or SQL."""

    stack = "tarantool"
    protocol: str | None = "binary"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.space = f"{prefix}kv"
        self.space_id: int | None = None
        self.quoted = '"' + self.space + '"'
        self.space_settings: dict[str, Any] = {}

    # --- connection ------------------------------------------------------------
    def connect(self) -> None:
        t = self.target
        where = endpoint(t)
        host, port = where.host, where.port
        try:
            # the connector waits forever for a greeting: a wrong port must not hang
            greeting = first_bytes(host, port, GREETING_TIMEOUT_S)
        except OSError as exc:
            raise connect_error(exc, t) from None
        if not is_tarantool(greeting):
            raise TargetError(f"cannot connect to {t.redacted()}: {what_answers(greeting)} "
                              f"answers on {host}:{port}, not Tarantool")
        try:
            self.conn = tarantool.Connection(
                host, port, user=t.user,
                password=t.password or password_for(t), connection_timeout=10,
                reconnect_max_attempts=0, encoding="utf-8")
        except Exception as exc:  # NetworkError, DatabaseError (auth), SchemaError...
            raise connect_error(exc, t) from None
        self.ownership = TarantoolOwnership(self.conn, self.prefix)

    def ping(self) -> None:
        """One trivial request and its answer (the network axis's RTT check)."""
        self.conn.ping(notime=True)

    def _admin(self, what: str, fn: Callable[[], T]) -> T:
        """Run untimed management work; a missing grant becomes one clear line."""
        try:
            return fn()
        except DatabaseError as exc:
            message = " ".join(str(getattr(exc, "message", exc)).split())
            if "denied" in message.lower() or getattr(exc, "code", 0) == 42:
                user = self.target.user or "guest"
                raise TargetError(
                    f"tarantool user {user!r} lacks the grants dbstand needs to {what} on "
                    f"{self.target.redacted()}: {message} (grant it read,write,execute,"
                    "create,drop on universe, or use `dbstand server up tarantool`)"
                ) from None
            raise

    # --- facts -------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        record = record_for(self.target)
        return dict(record.settings) if record is not None else {}

    def server_facts(self) -> dict[str, Any]:
        facts = self._admin("read the server's settings", lambda: server_facts(self.conn))
        options = space_options(str(facts.get("version", "0.0.0")), self._settings() or None)
        facts["space_engine"] = options.get("engine")
        facts["space_temporary"] = bool(options.get("temporary")
                                        or options.get("type") == "data-temporary")
        facts["space_options"] = {k: v for k, v in options.items() if k != "engine"}
        facts["managed"] = record_for(self.target) is not None
        return facts

    def describe(self) -> str:
        version = getattr(tarantool, "__version__", "?")
        if self.protocol == "sql":
            return (f"tarantool-python {version}, SQL through execute() (not prepared: the "
                    "connector has no prepare API, the SQL text goes with every request)")
        return f"tarantool-python {version}, binary protocol (IPROTO space requests)"

    def forms(self) -> dict[str, str]:
        return dict(FORMS[self.protocol or "binary"])

    # --- timed operations ------------------------------------------------------
    def _space_id(self) -> int:
        if self.space_id is None:
            found = self.conn.eval("local s = box.space[...] return s and s.id",
                                   self.space).data
            if not found or found[0] is None:
                raise CaseFailed(f"space {self.space} does not exist")
            self.space_id = int(found[0])
        return self.space_id

    def operation(self, op: str) -> Op:
        if self.protocol == "sql":
            return self._sql_operation(op)
        if self.protocol != "binary":
            raise CaseFailed(f"unknown tarantool protocol {self.protocol!r}")
        conn, sid = self.conn, self._space_id()
        if op == "select":
            select = conn.select

            def do_select(params: Any) -> object:
                data = select(sid, params[0]).data
                return data[0] if data else None

            return do_select
        if op == "insert":
            insert = conn.insert
            return lambda params: insert(sid, (None, params[0]))
        if op == "update":
            update = conn.update
            return lambda params: update(sid, params[1], [("=", 1, params[0])])
        if op == "upsert":
            upsert = conn.upsert
            return lambda params: upsert(sid, params, [("=", 1, params[1])])
        if op == "replace":
            replace = conn.replace
            return lambda params: replace(sid, params)
        if op == "delete":
            delete = conn.delete
            return lambda params: delete(sid, params[0])
        raise CaseFailed(f"unknown kv operation {op!r}")

    def _sql_operation(self, op: str) -> Op:
        execute, t = self.conn.execute, self.quoted
        if op == "select":
            sql = f'SELECT "id", "name" FROM {t} WHERE "id" = ?'

            def do_select(params: Any) -> object:
                data = execute(sql, params).data
                return data[0] if data else None

            return do_select
        if op == "upsert":
            update = f'UPDATE {t} SET "name" = ? WHERE "id" = ?'
            insert = f'INSERT INTO {t} ("id", "name") VALUES (?, ?)'

            def do_upsert(params: Any) -> object:
                key, name = params
                if execute(update, (name, key)).affected_row_count == 0:
                    return execute(insert, params)
                return None

            return do_upsert
        statements = {
            "insert": f'INSERT INTO {t} ("name") VALUES (?)',
            "update": f'UPDATE {t} SET "name" = ? WHERE "id" = ?',
            "replace": f'REPLACE INTO {t} ("id", "name") VALUES (?, ?)',
            "delete": f'DELETE FROM {t} WHERE "id" = ?',
        }
        if op not in statements:
            raise CaseFailed(f"unknown kv operation {op!r}")
        sql = statements[op]
        return lambda params: execute(sql, params)

    # --- untimed data management ---------------------------------------------
    def check_ownership(self) -> None:
        self._admin("check which spaces it owns", lambda: self.ownership.check(self.space))

    def create_table(self) -> None:
        facts_version = self._admin("read the server version", lambda: str(
            self.conn.eval("return box.info.version").data[0]))
        options = space_options(facts_version, self._settings() or None)
        self.space_id = self._admin(
            "create its space", lambda: self.ownership.create_kv(self.space, options))

    def drop_table(self) -> None:
        self._admin("drop its space", lambda: self.ownership.drop(self.space))
        self.space_id = None

    def fill(self, rows: Iterable[tuple[int, str]],
             progress: Progress | None = None) -> Loaded:
        """Tarantool's own bulk path: chunks of tuples inserted by a Lua function on the
        server, one transaction each (memtx keeps no statistics to gather)."""
        start = time.perf_counter()
        done = 0
        it = iter(rows)
        while chunk := [list(row) for row in islice(it, FILL_CHUNK)]:
            def fill_chunk(chunk: list[list[Any]] = chunk) -> Any:
                return self.conn.eval(_FILL, self.space, chunk)

            self._admin("fill its space", fill_chunk)
            done += len(chunk)
            if progress and done % CHUNK < FILL_CHUNK:
                progress(done, None)
        return Loaded(self.space, done, time.perf_counter() - start,
                      "server-side Lua inserts in chunks (tarantool)")

    def count(self, where: str = "", params: Sequence[Any] = ()) -> int:
        if where:
            raise CaseFailed("tarantool kv client counts whole spaces only")
        return int(self.conn.eval("return box.space[...]:count()", self.space).data[0])

    def fetch(self, key: int) -> tuple[int, str] | None:
        data = self.conn.select(self._space_id(), key).data
        return (int(data[0][0]), str(data[0][1])) if data else None

    def fetch_names(self, keys: Sequence[int]) -> dict[int, str]:
        rows = self.conn.eval(_NAMES, self.space, list(keys)).data[0]
        return {int(k): str(v) for k, v in rows}

    def delete_above(self, max_id: int) -> None:
        self.conn.eval(_DELETE_ABOVE, self.space, max_id)

