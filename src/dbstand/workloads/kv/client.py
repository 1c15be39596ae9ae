"""What a stack implements for the kv workload.

A `KvClient` wraps one connection of the stack under test. Its operations are
plain callables taking one pre-built parameter tuple, so the engine's loop adds
nothing but the call. Data management (create, fill, verify, restore) runs
untimed, through the same connection.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from dbstand.sql.bulk import Loaded, Progress
from dbstand.targets.url import TargetURL

Op = Callable[[Any], object]


class KvClient(ABC):
    """One connection of a stack, able to run kv's operations on a dbstand table."""

    #: the stack name as registered
    stack: str = ""

    def __init__(self, target: TargetURL, prefix: str):
        self.target = target
        self.prefix = prefix

    @abstractmethod
    def connect(self) -> None:
        """Open the connection; raise TargetError (one line) when it cannot."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def server_facts(self) -> dict[str, Any]:
        """Server version and the settings that matter."""

    @abstractmethod
    def operation(self, op: str) -> Op:
        """The callable doing `op` on one parameter tuple (the timed part)."""

    def forms(self) -> dict[str, str]:
        """How each op is spelled on this target (native upsert/replace forms...)."""
        return {}

    def describe(self) -> str:
        """One line recorded with results: driver, version, protocol, prepared or not..."""
        return self.stack

    def details(self) -> dict[str, Any]:
        """Extra fields for the results record (e.g. the driver under an ORM)."""
        return {}

    # --- untimed data management ---------------------------------------------
    @abstractmethod
    def check_ownership(self) -> None:
        """Raise OwnershipError if the kv table's name is taken by someone else's table."""

    @abstractmethod
    def create_table(self) -> None:
        """(Re)create dbstand's kv table; refuse if another owner has the name."""

    @abstractmethod
    def fill(self, rows: Iterable[tuple[int, str]],
             progress: Progress | None = None) -> Loaded:
        """Insert rows (id, name) by the kind's bulk path (sql/bulk.py), statistics
        gathered after; what it did (rows, seconds, path) for the record."""

    def restore(self, rows: Iterable[tuple[int, str]]) -> None:
        """Put back rows an iteration deleted (the few of one iteration)."""
        self.fill(rows)

    @abstractmethod
    def drop_table(self) -> None: ...

    @abstractmethod
    def count(self, where: str = "", params: Sequence[Any] = ()) -> int:
        """Rows of the kv table (optionally filtered: `id > ?`, `name = ?`...)."""

    @abstractmethod
    def fetch(self, key: int) -> tuple[int, str] | None: ...

    @abstractmethod
    def delete_above(self, max_id: int) -> None:
        """Remove rows an iteration added (ids above the initial fill)."""

    def fetch_names(self, keys: Sequence[int]) -> dict[int, str]:
        return {k: row[1] for k in keys if (row := self.fetch(k)) is not None}


class ConnKvClient(KvClient):
    """A KvClient over one driver connection, `conn`, which close() ends."""

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.conn: Any = None

    def close(self) -> None:
        """Close the connection once: `conn` is cleared even when the driver's close
        raises, so closing again (cleanup after a failure) does nothing."""
        if self.conn is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None


AsyncOp = Callable[[Any], Awaitable[object]]


class AsyncKvClient(ABC):
    """One connection (or one multiplexed session) of an asyncio stack.

    Only the timed operations are async. Preparing, verifying and restoring the
    table go through the synchronous stack named by `admin_stack` on the same
    target, which also makes the verification independent of the stack under test.
    """

    stack: str = ""
    #: a synchronous stack of the same target kind used for untimed data management
    admin_stack: str = ""
    #: True if many coroutines may use one connection at once (e.g. asynctnt)
    multiplexes: bool = False

    def __init__(self, target: TargetURL, prefix: str):
        self.target = target
        self.prefix = prefix

    @abstractmethod
    async def connect(self) -> None:
        """Open the connection; raise TargetError (one line) when it cannot."""

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def operation(self, op: str) -> AsyncOp:
        """The coroutine function doing `op` on one parameter tuple (the timed part);
        `select` returns the row (id, name) or None."""

    def forms(self) -> dict[str, str]:
        return {}

    def describe(self) -> str:
        """One line recorded with results: driver, version, prepared or not..."""
        return self.stack
