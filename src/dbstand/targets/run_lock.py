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

Each kind's lock is in its folder (`targets/<kind>/lock.py: hold`, named by the
descriptor's `run_lock`); a kind without one (MongoDB) runs unlocked. `hold(target,
prefix, connect)` takes its connection from `connect()`, which the layer that owns
connections gives (workloads/run_lock.py: the kind's admin connection).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

from dbstand.errors import UserError
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL


class RunLocked(UserError):
    """Another run holds the lock of this (database, prefix)."""


def busy(target: TargetURL, prefix: str, holder: str) -> RunLocked:
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


@contextlib.contextmanager
def run_lock(target: TargetURL, prefix: str, connect: Callable[[], Any]) -> Iterator[None]:
    """Hold the lock of (target's database, prefix) for the block; RunLocked if another
    run holds it. Kinds without a lock run unlocked."""
    kind = get_kind(target.kind)
    if kind.run_lock is None:
        yield
        return
    with kind.load("run_lock")(target, prefix, connect):
        yield
