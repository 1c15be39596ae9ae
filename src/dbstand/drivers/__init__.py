"""Connect and close for each Python driver, written once and used by every workload
(kv and batch adapters, the parking service, admin connections, counters).

Each module `drivers/<driver>.py` has `connect(target, **options)` (a coroutine for
asyncio drivers) that opens the driver's own connection object: endpoint defaults
come from the target's kind (targets/<kind>/kind.py), the password of a `dbstand
server up` server is filled in, and every connect has a time limit. `open_with`
turns any failure into one TargetError line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from dbstand.errors import TargetError

T = TypeVar("T")

#: seconds for a connection to be made and the server's greeting read
CONNECT_TIMEOUT_S = 10
#: seconds a statement's answer may take before the driver gives up (a stalled server)
READ_TIMEOUT_S = 300


def open_with(opener: Callable[[], T], target: Any) -> T:
    """Call a driver's connect; its failure becomes one clear TargetError line."""
    from dbstand.targets.connect_errors import connect_error

    try:
        return opener()
    except TargetError:
        raise
    except Exception as exc:  # drivers raise their own hierarchies
        raise connect_error(exc, target) from None
