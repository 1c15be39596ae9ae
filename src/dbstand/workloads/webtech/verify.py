"""Verify a running webtech stack: every test it lists, by the rules in rules.py,
with the database's rows and the server's statement counter behind the db checks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from dbstand.probes.statements import open_counter
from dbstand.stacks.launcher import StackHandle
from dbstand.targets.url import TargetURL
from dbstand.workloads.admin import admin_client
from dbstand.workloads.served import ServedWorkload
from dbstand.workloads.webtech.data import ROWS, ensure_world, world_rows
from dbstand.workloads.webtech.rules import (
    STATIC_DIR,
    DatabaseView,
    Verdict,
    check_db_pages,
    verify_static,
)


def verify_stack(handle: StackHandle, target: TargetURL | None, prefix: str) -> list[Verdict]:
    """One verdict per test the stack's manifest lists."""
    tests = handle.manifest.tests
    verdicts = verify_static(handle.base_url, tests)
    if not {"db", "cache"} & set(tests):
        return verdicts
    if target is None:
        return [*verdicts, *(Verdict(t, False, "no database target given")
                             for t in ("db", "cache") if t in tests)]
    with contextlib.ExitStack() as stack:
        selects_during: Callable[[Callable[[], object]], int] | None = None
        try:
            counter = open_counter(target, prefix, False, admin_client)
            stack.callback(counter.close)

            def selects_during(action: Callable[[], object]) -> int:
                counter.totals.clear()
                counter.begin()
                action()
                counter.end()
                return counter.totals.get("select", 0)
        except LookupError:
            selects_during = None
        view = DatabaseView(lambda ids: world_rows(target, prefix, ids), ROWS, selects_during)
        verdicts += check_db_pages(handle.base_url, view, tests)
    return verdicts


def _prepare(target: TargetURL, prefix: str) -> None:
    ensure_world(target, prefix)


SERVED = ServedWorkload("webtech", prepare=_prepare, verify=verify_stack,
                        static_dir=STATIC_DIR, needs_target=False)
