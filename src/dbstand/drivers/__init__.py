"""Connect and close for each Python driver, written once and used by every workload
(kv and batch adapters, the parking service, admin connections, counters).

Each module `drivers/<driver>.py` has `connect(target, **options)` (a coroutine for
asyncio drivers) that opens the driver's own connection object: endpoint defaults
come from the target's kind (targets/<kind>/kind.py), the password of a `dbstand
server up` server is filled in, and every connect has a time limit. `open_with`
turns any failure into one TargetError line.

Time limits: `connect_timeout_s()` bounds making a connection and reading the
server's greeting; `read_timeout_s()` bounds the wait for one answer where the driver
offers a client-side limit (PyMySQL, mysqlclient, mysql-connector, pg8000, asyncpg),
so a stalled server fails the case instead of hanging the run. Both can be set
from the environment (DBSTAND_CONNECT_TIMEOUT, DBSTAND_READ_TIMEOUT, in seconds),
e.g. to test a stall quickly.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, TypeVar

from dbstand.errors import TargetError, UserError

T = TypeVar("T")

#: seconds for a connection to be made and the server's greeting read
CONNECT_TIMEOUT_S = 10
#: seconds a statement's answer may take before the driver gives up (a stalled server)
READ_TIMEOUT_S = 300
CONNECT_TIMEOUT_ENV = "DBSTAND_CONNECT_TIMEOUT"
READ_TIMEOUT_ENV = "DBSTAND_READ_TIMEOUT"


def _seconds(env: str, default: int) -> int:
    """Whole seconds from `env` (drivers such as mysqlclient take integers), else the
    default; a value that is not a positive number is one clear error."""
    text = os.environ.get(env, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise UserError(f"{env} must be a number of seconds from 1 to 86400, not {text!r}")
    return max(1, round(value))


def connect_timeout_s() -> int:
    """Seconds to connect and read the greeting (DBSTAND_CONNECT_TIMEOUT, default 10)."""
    return _seconds(CONNECT_TIMEOUT_ENV, CONNECT_TIMEOUT_S)


def read_timeout_s() -> int:
    """Seconds one answer may take (DBSTAND_READ_TIMEOUT, default 300)."""
    return _seconds(READ_TIMEOUT_ENV, READ_TIMEOUT_S)


def open_with(opener: Callable[[], T], target: Any) -> T:
    """Call a driver's connect; its failure becomes one clear TargetError line."""
    from dbstand.targets.connect_errors import connect_error

    try:
        return opener()
    except TargetError:
        raise
    except Exception as exc:  # drivers raise their own hierarchies
        raise connect_error(exc, target) from None
