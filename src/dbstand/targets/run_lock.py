"""One run at a time per (database, prefix).

Two runs with the same prefix on the same database would drop and refill each other's
tables mid-measurement and both report numbers that mean nothing. Before a run
measures anything it takes a lock named after the database and the prefix, held by a
connection of its own for the whole run; a second run finds it taken and refuses in
one line. Every lock is released by the database itself when its holder goes away,
even if dbstand is killed, so a crashed run never blocks the next one:

- PostgreSQL: a session advisory lock (`pg_try_advisory_lock`, the key a hash of the
  database and the prefix; advisory locks are per database).
- MariaDB/MySQL: a named user lock (`GET_LOCK(name, 0)`; names are server-wide, so
  the name holds the database).
- SQLite: an exclusive `flock` on a lock file next to the database
  (`<database>.<prefix>lock`), removed at the end. An in-memory database is private
  to its process and needs none.
- Tarantool: an entry in a Lua table on the instance naming the holder's session,
  free again once that session no longer exists.

A kind without a lock here (MongoDB) runs unlocked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dbstand.errors import MissingDependencyError, TargetError, UserError
from dbstand.targets.url import TargetURL

#: the drivers/ module of each admin stack that can hold a lock
_DRIVER_MODULES = {"psycopg": "psycopg", "psycopg2": "psycopg2", "pg8000": "pg8000",
                   "pymysql": "pymysql", "mysqlclient": "mysqlclient",
                   "mysql-connector-python": "mysql_connector"}


class RunLocked(UserError):
    """Another run holds the lock of this (database, prefix)."""


def _busy(target: TargetURL, prefix: str, holder: str) -> RunLocked:
    return RunLocked(f"another dbstand run is using prefix {prefix!r} on {target.redacted()} "
                     f"({holder}): wait until it ends, or give this run another --prefix")


def lock_name(target: TargetURL, prefix: str) -> str:
    """The lock's name: readable when it fits MySQL's 64 characters, hashed otherwise."""
    name = f"dbstand:{target.database or ''}:{prefix}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(f"{target.database}\0{prefix}".encode()).hexdigest()[:40]
    return f"dbstand:{digest}"


def advisory_key(target: TargetURL, prefix: str) -> int:
    """A signed 64-bit key for pg_try_advisory_lock, the same in every dbstand."""
    digest = hashlib.sha256(f"dbstand\0{target.database or ''}\0{prefix}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _admin_connection(target: TargetURL) -> Any:
    """A DB-API connection (autocommit) through the first installed admin driver."""
    from dbstand.drivers import open_with
    from dbstand.stacks.catalog import get_stack
    from dbstand.targets.kinds import get_kind

    kind = get_kind(target.kind)
    for stack in kind.admin_stacks:
        module = _DRIVER_MODULES.get(stack)
        if module is None or not get_stack(stack).installed:
            continue
        driver = importlib.import_module(f"dbstand.drivers.{module}")
        connect: Any = driver.connect
        return open_with(lambda connect=connect: connect(target), target)  # type: ignore[misc]
    raise MissingDependencyError(f"no driver installed to reach {target.redacted()} "
                                 f"(any of {', '.join(kind.admin_stacks)})")


@contextlib.contextmanager
def _postgresql(target: TargetURL, prefix: str) -> Iterator[None]:
    conn = _admin_connection(target)
    try:
        cur = conn.cursor()
        cur.execute("SET application_name = 'dbstand run'")
        key = advisory_key(target, prefix)
        cur.execute("SELECT pg_try_advisory_lock(%s)", (key,))
        if not cur.fetchone()[0]:
            # a bigint key is stored as classid (high 32 bits) and objid (low 32 bits)
            high, low = (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF
            cur.execute("SELECT a.pid, a.application_name FROM pg_locks l "
                        "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = "
                        "'advisory' AND l.granted AND l.classid::bigint = %s AND "
                        "l.objid::bigint = %s LIMIT 1", (high, low))
            row = cur.fetchone()
            holder = (f"held by backend pid {row[0]}, application {row[1] or '?'!r}"
                      if row else "held by another session")
            raise _busy(target, prefix, holder)
        yield
        with contextlib.suppress(Exception):
            cur.execute("SELECT pg_advisory_unlock(%s)", (key,))
    finally:
        with contextlib.suppress(Exception):
            conn.close()


@contextlib.contextmanager
def _mysql(target: TargetURL, prefix: str) -> Iterator[None]:
    conn = _admin_connection(target)
    name = lock_name(target, prefix)
    try:
        cur = conn.cursor()
        cur.execute("SELECT GET_LOCK(%s, 0)", (name,))
        got = cur.fetchone()[0]
        if got != 1:
            cur.execute("SELECT IS_USED_LOCK(%s)", (name,))
            row = cur.fetchone()
            holder = (f"lock {name!r} held by connection id {row[0]}" if row and row[0]
                      else f"lock {name!r} is taken")
            raise _busy(target, prefix, holder)
        yield
        with contextlib.suppress(Exception):
            cur.execute("SELECT RELEASE_LOCK(%s)", (name,))
            cur.fetchall()
    finally:
        with contextlib.suppress(Exception):
            conn.close()


def sqlite_lock_path(target: TargetURL, prefix: str) -> Path:
    from dbstand.drivers.sqlite3 import path_of

    return Path(f"{path_of(target)}.{prefix}lock")


@contextlib.contextmanager
def _sqlite(target: TargetURL, prefix: str) -> Iterator[None]:
    if target.is_memory:
        yield
        return
    path = sqlite_lock_path(target, prefix)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise TargetError(f"cannot use {target.redacted()}: cannot create the lock file "
                              f"{path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = os.read(fd, 64).decode().strip()
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise _busy(target, prefix, f"lock file {path}"
                            + (f", process {holder}" if holder else "")) from None
            raise
        # the file may have been removed by the run that just ended: lock the one on disk
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


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
def _tarantool(target: TargetURL, prefix: str) -> Iterator[None]:
    from dbstand.workloads.kv.admin import admin_client

    client = admin_client(target, prefix)
    conn = client.conn
    name = f"{target.database or ''}:{prefix}"
    try:
        holder = conn.eval(_TARANTOOL_TAKE, name).data[0]
        if holder:
            raise _busy(target, prefix, f"held by session {holder}")
        yield
        with contextlib.suppress(Exception):
            conn.eval(_TARANTOOL_RELEASE, name)
    finally:
        with contextlib.suppress(Exception):
            client.close()


_LOCKS = {"postgresql": _postgresql, "mysql": _mysql, "sqlite": _sqlite,
          "tarantool": _tarantool}


@contextlib.contextmanager
def run_lock(target: TargetURL, prefix: str) -> Iterator[None]:
    """Hold the lock of (target's database, prefix) for the block; RunLocked if another
    run holds it. Kinds without a lock run unlocked."""
    lock = _LOCKS.get(target.kind)
    if lock is None:
        yield
        return
    with lock(target, prefix):
        yield


@contextlib.contextmanager
def run_locks(pairs: list[tuple[TargetURL, str]]) -> Iterator[None]:
    """Hold every (target, prefix) lock of a run, each once, in a stable order."""
    seen: dict[tuple[str, str], tuple[TargetURL, str]] = {}
    for target, prefix in pairs:
        seen.setdefault((target.secret(), prefix), (target, prefix))
    with contextlib.ExitStack() as stack:
        for key in sorted(seen):
            stack.enter_context(run_lock(*seen[key]))
        yield
