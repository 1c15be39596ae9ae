"""Workloads, by name."""

from __future__ import annotations

from dbstand.errors import UserError
from dbstand.workloads.base import Case, CaseOutcome, Workload
from dbstand.workloads.batch import BatchWorkload
from dbstand.workloads.kv import KvWorkload
from dbstand.workloads.parking import ParkingWorkload

WORKLOADS: dict[str, type[Workload]] = {"kv": KvWorkload, "batch": BatchWorkload,
                                         "parking": ParkingWorkload}

#: named in the specs but not built yet: listed so users see what is coming
PLANNED = {"webtech": "server technologies on static/dynamic pages",
           "docquery": "sync vs async driver vs ODM behind an HTTP endpoint"}


def get_workload(name: str) -> Workload:
    if name in WORKLOADS:
        return WORKLOADS[name]()
    if name in PLANNED:
        raise UserError(f"workload {name!r} is not available in this version yet")
    raise UserError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})")


__all__ = ["WORKLOADS", "Case", "CaseOutcome", "Workload", "get_workload"]
