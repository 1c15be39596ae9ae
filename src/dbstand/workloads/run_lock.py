"""One run at a time per (database, prefix): each kind's lock (targets/<kind>/lock.py,
targets/run_lock.py) held on the kind's admin connection, which this layer opens."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from dbstand.targets import run_lock as kind_lock
from dbstand.targets.url import TargetURL
from dbstand.workloads.admin import lock_connection


@contextlib.contextmanager
def run_lock(target: TargetURL, prefix: str) -> Iterator[None]:
    """Hold the lock of (target's database, prefix) for the block; RunLocked if another
    run holds it."""
    with kind_lock.run_lock(target, prefix, lambda: lock_connection(target, prefix)):
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
