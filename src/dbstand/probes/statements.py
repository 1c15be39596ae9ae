"""Statements by kind, counted where the database counts them.

PostgreSQL: pg_stat_statements (the managed server preloads it; dbstand creates the
extension only on servers it manages). MariaDB/MySQL: the global Com_* counters.
Tarantool: box.stat() request counters. SQLite: a trace callback on the case's own
connection (in-process, so it runs in warm-up iterations only: it would slow the
timed loop by a third).

Server-side counters are read through a separate admin connection, and the counter's
own reads are subtracted: two back-to-back snapshots at set-up measure what one
snapshot adds, and every window's difference is corrected by it.
"""

from __future__ import annotations

import contextlib
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from dbstand.probes import KINDS
from dbstand.targets.url import TargetURL

#: prefix of the counter keys of protocol commands that are not statements
COMMAND = "command:"

_FOR_UPDATE = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+)?UPDATE\b", re.IGNORECASE)
_VERBS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}



def kind_of(sql: str) -> str:
    """The kind of an SQL statement from its text: its verb, FOR UPDATE for selects."""
    words = sql.lstrip(" \t\r\n(").split(None, 1)
    verb = words[0].upper() if words else ""
    if verb == "SELECT":
        return "select_for_update" if _FOR_UPDATE.search(sql) else "select"
    return _VERBS.get(verb, "other")


class StatementCounter(ABC):
    """Cumulative counters read at the edges of each window; differences summed."""

    #: statement kinds this counter cannot tell apart: kind -> where it counts them
    uncounted: ClassVar[dict[str, str]] = {}
    source = ""
    note = ""

    def __init__(self) -> None:
        self.totals: Counter[str] = Counter()
        self.own: Counter[str] = Counter()
        self._start: Counter[str] | None = None

    @abstractmethod
    def raw(self) -> Counter[str]:
        """The server's cumulative counters now (their own names)."""

    def classify(self, delta: Counter[str]) -> Counter[str]:
        """Counter differences as statement kinds (KINDS)."""
        return delta

    def calibrate(self) -> None:
        """Measure what one snapshot adds to the counters, to subtract it later."""
        first = self.raw()
        second = self.raw()
        self.own = Counter({k: v - first.get(k, 0) for k, v in second.items()
                            if v - first.get(k, 0) > 0})

    def begin(self) -> None:
        self._start = self.raw()

    def end(self) -> None:
        if self._start is None:
            return
        now = self.raw()
        delta = Counter({k: v - self._start.get(k, 0) - self.own.get(k, 0)
                         for k, v in now.items()})
        self.totals.update(self.classify(+delta))  # unary +: drops zero and negative
        self._start = None

    def per_op(self, ops: int) -> dict[str, float]:
        return {kind: round(self.totals.get(kind, 0) / ops, 3) for kind in KINDS}

    def total(self) -> dict[str, int]:
        """Statements counted over all windows, by kind."""
        return {kind: self.totals.get(kind, 0) for kind in KINDS}

    def commands_per_op(self, ops: int) -> dict[str, float] | None:
        """Protocol commands that are not statements (MySQL's ping, stmt_prepare...)."""
        out = {k.removeprefix(COMMAND): round(n / ops, 3) for k, n in self.totals.items()
               if k.startswith(COMMAND) and n}
        return out or None

    def close(self) -> None:
        """Release what the counter holds (an admin connection)."""
        self._start = None


class _AdminBacked(StatementCounter):
    """A counter reading through an admin client of one of dbstand's own stacks."""

    def __init__(self, client: Any, may_create: bool = False):
        super().__init__()
        self.client = client

    def close(self) -> None:
        super().close()
        with contextlib.suppress(Exception):
            self.client.close()


class PgStatStatements(_AdminBacked):
    source = "pg_stat_statements"

    def __init__(self, client: Any, may_create: bool):
        super().__init__(client)
        cur = client.cur
        cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'")
        if cur.fetchone() is None:
            if not may_create:
                raise LookupError("pg_stat_statements is not installed in this database "
                                  "(dbstand creates it only on servers it manages)")
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        cur.execute("SELECT 1 FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass"
                    " AND attname = 'toplevel'")
        toplevel = " AND toplevel" if cur.fetchone() is not None else ""
        self.query = ("SELECT query, calls FROM pg_stat_statements WHERE dbid = "
                      "(SELECT oid FROM pg_database WHERE datname = current_database())"
                      + toplevel)
        self.note = "statements of every session of this database (server-wide counters)"

    def raw(self) -> Counter[str]:
        cur = self.client.cur
        try:
            cur.execute(self.query)
            rows = cur.fetchall()
        except Exception as exc:  # e.g. not in shared_preload_libraries
            raise LookupError(" ".join(str(exc).split())) from None
        counts: Counter[str] = Counter()
        for query, calls in rows:
            if "pg_stat_statements" not in query:  # the probe's own reads
                counts[kind_of(query)] += int(calls)
        return counts


class MysqlComCounters(_AdminBacked):
    source = "SHOW GLOBAL STATUS Com_*"
    uncounted: ClassVar[dict[str, str]] = {"select_for_update": "select"}
    note = ("server-wide counters; SELECT ... FOR UPDATE is not told apart (counted as "
            "select); REPLACE counts as other; prepared executions count by statement "
            "kind; pings, prepares and other protocol commands are `commands`, not "
            "statements")

    def raw(self) -> Counter[str]:
        cur = self.client.cur
        cur.execute("SHOW GLOBAL STATUS LIKE 'Com\\_%'")
        counts: Counter[str] = Counter()
        for name, value in cur.fetchall():
            name = name.decode() if isinstance(name, bytes) else str(name)
            value = value.decode() if isinstance(value, bytes) else str(value)
            if value.isdigit():
                counts[name.lower()] = int(value)
        return counts

    def classify(self, delta: Counter[str]) -> Counter[str]:
        kinds: Counter[str] = Counter()
        mapping = {"com_select": "select", "com_insert": "insert",
                   "com_insert_select": "insert", "com_update": "update",
                   "com_update_multi": "update", "com_delete": "delete",
                   "com_delete_multi": "delete"}
        for name, n in delta.items():
            if name == "com_stmt_execute":
                continue  # an execution counts under its statement's kind
            if name.startswith("com_stmt_") or name == "com_admin_commands":
                # prepare, reset, close, ping...: round trips, not statements
                kinds[COMMAND + name.removeprefix("com_")] += n
                continue
            kinds[mapping.get(name, "other")] += n
        return kinds


class TarantoolBoxStat(_AdminBacked):
    source = "box.stat()"
    note = ("requests counted by the instance; an SQL statement is one EXECUTE request "
            "(kind unknown: other), the space writes it makes inside are not statements")

    def raw(self) -> Counter[str]:
        stat = self.client.conn.eval("return box.stat()").data[0]
        return Counter({k: int(v["total"]) for k, v in stat.items()
                        if isinstance(v, dict) and "total" in v})

    def classify(self, delta: Counter[str]) -> Counter[str]:
        kinds: Counter[str] = Counter()
        requests = ("CALL", "EVAL", "EXECUTE", "PREPARE", "REPLACE", "UPSERT")
        if delta.get("EXECUTE", 0) > 0:
            # SQL: box-level counters also count the statements' internal writes
            kinds["other"] = sum(delta.get(k, 0) for k in ("CALL", "EVAL", "EXECUTE",
                                                           "PREPARE"))
            return kinds
        kinds["select"] = delta.get("SELECT", 0)
        kinds["insert"] = delta.get("INSERT", 0)
        kinds["update"] = delta.get("UPDATE", 0)
        kinds["delete"] = delta.get("DELETE", 0)
        kinds["other"] = sum(delta.get(k, 0) for k in requests)
        return kinds


class SqliteTrace(StatementCounter):
    """Counts statements on one sqlite3 connection through its trace callback."""

    source = "sqlite3 trace callback (warm-up iterations)"
    note = ("counted in the warm-up iterations, which do the same work as the timed "
            "ones: the callback would slow the timed loop by about a third")

    def __init__(self, conn: Any):
        super().__init__()
        self.conn = conn
        self.counts: Counter[str] = Counter()

    def _trace(self, sql: str) -> None:
        self.counts[kind_of(sql)] += 1

    def raw(self) -> Counter[str]:
        return Counter(self.counts)

    def begin(self) -> None:
        self.conn.set_trace_callback(self._trace)
        super().begin()

    def end(self) -> None:
        self.conn.set_trace_callback(None)
        super().end()


#: the statement counters, by the name a kind's descriptor gives (`statements=`)
COUNTERS: dict[str, type[_AdminBacked]] = {
    "pg_stat_statements": PgStatStatements, "com_counters": MysqlComCounters,
    "box_stat": TarantoolBoxStat}


def open_counter(target: TargetURL, prefix: str, managed: bool,
                 admin: Callable[[TargetURL, str], Any]) -> StatementCounter:
    """A server-side statement counter for `target`, on a connection `admin(target,
    prefix)` opens (the workload's admin connection); LookupError says why there is
    none."""
    from dbstand.targets.kinds import get_kind

    kind = get_kind(target.kind)
    if kind.statements is None:
        raise LookupError(f"no statement counter for {kind.title} targets")
    client = admin(target, prefix)
    try:
        counter: StatementCounter = COUNTERS[kind.statements](client, may_create=managed)
        counter.calibrate()
    except LookupError:
        client.close()
        raise
    except Exception as exc:
        client.close()
        raise LookupError(" ".join(str(exc).split()) or type(exc).__name__) from None
    return counter
