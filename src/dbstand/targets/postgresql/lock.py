"""PostgreSQL's run lock: a session advisory lock (`pg_try_advisory_lock`, the key a
hash of the database and the prefix; advisory locks are per database)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dbstand.targets.run_lock import advisory_key, busy
from dbstand.targets.url import TargetURL


@contextlib.contextmanager
def hold(target: TargetURL, prefix: str, connect: Callable[[], Any]) -> Iterator[None]:
    conn = connect()
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
            raise busy(target, prefix, holder)
        yield
        with contextlib.suppress(Exception):
            cur.execute("SELECT pg_advisory_unlock(%s)", (key,))
    finally:
        with contextlib.suppress(Exception):
            conn.close()
