"""Waiting for a condition with a deadline, never for a fixed time.

A fixed sleep is both too long on an idle machine and too short on a loaded one; a
test polls for the very thing it needs instead, and fails with a message naming it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, what: str = "the condition",
               interval: float = 0.02) -> T:
    """Poll `predicate` until it returns something truthy and return that value.

    Raises AssertionError naming `what` when `timeout` seconds pass first. The
    predicate is always tried once more at the deadline, so a slow poll never turns a
    condition that did come true into a failure.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
