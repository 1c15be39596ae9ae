"""Which failures are lock conflicts worth running the request again.

Under concurrent users, InnoDB and PostgreSQL may pick a request as a deadlock
victim (or time out its lock wait) and roll it back; the request is then run again
from the start, as applications do, rather than answering its default error status.
Drivers and ORMs wrap the driver's error differently, so the chain is searched.
(psycopg: `sqlstate`; pg8000: the error fields' `C`; PyMySQL: the error number.)
"""

from __future__ import annotations

#: PostgreSQL SQLSTATEs: deadlock_detected, serialization_failure
_SQLSTATES = frozenset({"40P01", "40001"})
#: MySQL/MariaDB error numbers: ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT
_MYSQL_ERRNOS = frozenset({1213, 1205})

RETRIES = 5


def is_conflict(exc: BaseException) -> bool:
    """True when `exc` (or what it wraps) is a deadlock or lock-wait failure."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        err = todo.pop()
        if not isinstance(err, BaseException) or id(err) in seen:
            continue
        seen.add(id(err))
        if getattr(err, "sqlstate", None) in _SQLSTATES:
            return True
        args = getattr(err, "args", ())
        if args and isinstance(args[0], int) and args[0] in _MYSQL_ERRNOS:
            return True
        if args and isinstance(args[0], dict) and args[0].get("C") in _SQLSTATES:
            return True  # pg8000: the server's error fields, C = SQLSTATE
        todo += [getattr(err, "orig", None), err.__cause__, err.__context__, *args[:1]]
    return False
