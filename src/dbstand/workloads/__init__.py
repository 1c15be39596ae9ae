"""Workloads, by name: each is a package under workloads/ that brings its cases, its
adapters, its report section and its CLI commands. Nothing is imported until used,
so listing workloads or printing help loads no driver."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbstand.errors import UserError
from dbstand.workloads.base import Case, CaseOutcome, Workload

if TYPE_CHECKING:
    from dbstand.workloads.served import ServedWorkload


@dataclass(frozen=True)
class WorkloadEntry:
    """What the rest of dbstand needs to know of a workload without importing it."""

    name: str
    description: str
    operations: tuple[str, ...]
    #: "module:Class" of its Workload; None for one whose run command drives the HTTP
    #: engine itself (`run http`), with no cases for execute()
    workload: str | None
    #: CLI commands it contributes: group ("run", "serve", "verify") -> "module:attr"
    commands: dict[str, str] = field(default_factory=dict)
    #: served over HTTP by server stacks: "module:attr" of its ServedWorkload
    served: str | None = None
    #: "module:function(records, title) -> report.model.Report" of its report section
    report: str = "dbstand.workloads.kv.report:build"

    def load(self) -> type[Workload]:
        if self.workload is None:
            raise UserError(f"workload {self.name!r} runs only as `dbstand run {self.name}`")
        module_name, _, attr = self.workload.partition(":")
        cls: type[Workload] = getattr(importlib.import_module(module_name), attr)
        return cls


_P = "dbstand.workloads"
ENTRIES: dict[str, WorkloadEntry] = {e.name: e for e in (
    WorkloadEntry("kv", "single-key CRUD by random key, each operation its own benchmark",
                  ("select", "insert", "update", "upsert", "replace", "delete"),
                  f"{_P}.kv.workload:KvWorkload", {"run": f"{_P}.kv.cli:run_kv"}),
    WorkloadEntry("batch", "bulk insert/update/delete through every driver's batch APIs",
                  ("insert", "update", "delete"),
                  f"{_P}.batch.workload:BatchWorkload", {"run": f"{_P}.batch.cli:run_batch"},
                  report=f"{_P}.batch.report:build"),
    WorkloadEntry("parking", "the ORM study's OLTP service driven over HTTP by its suite",
                  ("pass",), f"{_P}.parking.workload:ParkingWorkload",
                  {"run": f"{_P}.parking.cli_run:run_parking",
                   "serve": f"{_P}.parking.cli_serve:serve_parking",
                   "verify": f"{_P}.parking.cli_verify:verify_parking"},
                  served=f"{_P}.parking.served:SERVED", report=f"{_P}.parking.report:build"),
    WorkloadEntry("webtech", "server technologies on the same small pages (file, hello, "
                  "loop, big, db, cache)", ("file", "hello", "loop", "big", "db", "cache",
                                            "json", "plaintext"),
                  f"{_P}.webtech.workload:WebtechWorkload",
                  {"run": f"{_P}.webtech.cli:run_webtech"},
                  served=f"{_P}.webtech.verify:SERVED", report=f"{_P}.webtech.report:build"),
    WorkloadEntry("docquery", "sync driver vs async driver vs ODM behind one Tornado "
                  "endpoint, on MongoDB-wire servers and PostgreSQL", ("test1", "test2"),
                  f"{_P}.docquery.workload:DocqueryWorkload",
                  {"run": f"{_P}.docquery.cli:run_docquery",
                   "serve": f"{_P}.docquery.cli:serve_docquery"},
                  served=f"{_P}.docquery.verify:SERVED", report=f"{_P}.docquery.report:build"),
    WorkloadEntry("script", "your own transactions in pgbench's script language (or its "
                  "built-ins) through every driver, pgbench itself as the limit row",
                  ("transaction",), f"{_P}.script.workload:ScriptWorkload",
                  {"run": f"{_P}.script.cli:run_script"}, report=f"{_P}.script.report:build"),
    WorkloadEntry("python", "your own Python function (bench file), one call per operation, "
                  "on connections of the chosen stacks", ("operation",),
                  f"{_P}.python.workload:PythonWorkload",
                  {"run": f"{_P}.python.cli:run_python"}),
    WorkloadEntry("http", "your own HTTP scenario (TOML: requests per virtual user, "
                  "captures, checks, think times) on the native engine, on a URL or a stack",
                  ("scenario",), None,
                  {"run": f"{_P}.scenario.cli:run_http"}),
)}

#: named in the specs but not built yet: listed so users see what is coming
PLANNED: dict[str, str] = {}


def served_workload(name: str) -> ServedWorkload:
    """The served-workload side of `name` (parking, webtech, ...)."""
    entry = ENTRIES.get(name)
    if entry is None or entry.served is None:
        served = [n for n, e in ENTRIES.items() if e.served]
        raise UserError(f"{name!r} is not a workload served over HTTP "
                        f"(those are: {', '.join(served)})")
    module_name, _, attr = entry.served.partition(":")
    spec: ServedWorkload = getattr(importlib.import_module(module_name), attr)
    return spec


def get_workload(name: str) -> Workload:
    if name in ENTRIES:
        return ENTRIES[name].load()()
    if name in PLANNED:
        raise UserError(f"workload {name!r} is not available in this version yet")
    raise UserError(f"unknown workload {name!r} (known: {', '.join(ENTRIES)})")


__all__ = ["ENTRIES", "PLANNED", "Case", "CaseOutcome", "Workload", "WorkloadEntry",
           "get_workload", "served_workload"]
