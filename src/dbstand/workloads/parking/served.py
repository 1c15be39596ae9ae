"""Parking as a served workload: the schema and seed rows first, then one exclusive
pass of the conformance suite against any running stack."""

from __future__ import annotations

from contextlib import closing

from dbstand.stacks.launcher import StackHandle
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking import db, schema
from dbstand.workloads.parking.suite import ParkingClient, verify
from dbstand.workloads.served import Check, ServedWorkload


def prepare(target: TargetURL, prefix: str) -> None:
    """Tables and seed rows (through the ownership registry) if missing."""
    with closing(db.connect(target)) as conn:
        schema.ensure_schema(conn, prefix)


def verify_stack(handle: StackHandle, target: TargetURL | None, prefix: str) -> list[Check]:
    """Each scenario of one exclusive pass, plus the pass's call profile."""
    verdicts, failure = verify(ParkingClient(handle.base_url), passes=1)
    checks = [Check(v.name, v.ok, "" if v.first_failure is None else
                    f"{v.first_failure.call}: expected {v.first_failure.expected}, "
                    f"got {v.first_failure.got}") for v in verdicts]
    if failure is not None:
        checks.append(Check("pass", False, str(failure)))
    return checks


SERVED = ServedWorkload("parking", prepare=prepare, verify=verify_stack)
