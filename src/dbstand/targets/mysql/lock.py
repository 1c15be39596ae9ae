"""MariaDB/MySQL's run lock: a named user lock (`GET_LOCK(name, 0)`; names are
server-wide, so the name holds the database)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dbstand.targets.run_lock import busy, lock_name
from dbstand.targets.url import TargetURL


@contextlib.contextmanager
def hold(target: TargetURL, prefix: str, connect: Callable[[], Any]) -> Iterator[None]:
    conn = connect()
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
            raise busy(target, prefix, holder)
        yield
        with contextlib.suppress(Exception):
            cur.execute("SELECT RELEASE_LOCK(%s)", (name,))
            cur.fetchall()
    finally:
        with contextlib.suppress(Exception):
            conn.close()
