"""Stacks measured by an external program (pgbench...) rather than by Python calls.

Such a stack still has a kv client for the untimed work (create, fill, verify, drop),
but each iteration is run by its own executor, and it verifies its iterations itself
since the program draws its own keys.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from dbstand.engine.executor import Executor


class ExternalKv(ABC):
    """Mixin for kv clients whose timed work is done by another program."""

    #: whose CPU is the client's: the child processes only (not dbstand's own)
    client_cpu_scope = "children"

    @abstractmethod
    def executor(self, op: str, rows: int) -> Executor:
        """The executor running one iteration of `op` through the external program."""

    @abstractmethod
    def after_iteration(self, index: int, args: Sequence[Any]) -> None:
        """Check what the program did in iteration `index`; put the data back."""
