"""`dbstand list`: what dbstand can run, and whether this machine has what it needs."""

from __future__ import annotations

from typing import Any

import typer

from dbstand.cli.output import FormatOption, show
from dbstand.console import console
from dbstand.workloads import ENTRIES, PLANNED
from dbstand.workloads.catalog import STACKS

app = typer.Typer(help="List stacks, workloads or targets.", no_args_is_help=True)


@app.command("stacks")
def list_stacks(workload: str | None = typer.Option(
        None, help="Only the stacks implementing this workload"),
        format: FormatOption = "table") -> None:
    """Stacks: in-process ones (drivers, ORMs) and server stacks (manifests), with what
    they need and whether it is installed."""
    from dbstand.stacks.build import missing_debian
    from dbstand.stacks.manifest import all_manifests

    rows: list[dict[str, Any]] = []
    for spec in STACKS.values():
        if workload is not None and workload not in spec.workloads:
            continue
        versions = spec.versions()
        needs = ", ".join(f"{p} {v}" if v not in ("missing", "builtin") else p
                          for p, v in versions.items())
        rows.append({"stack": spec.name, "kind": "in-process", "targets": list(spec.targets),
                     "workloads": list(spec.workloads), "needs": needs,
                     "installed": spec.installed, "missing": [],
                     "what_it_is": spec.description})
    for m in all_manifests().values():
        if workload is not None and not m.implements(workload):
            continue
        missing = missing_debian(m.debian)
        rows.append({"stack": m.name, "kind": f"server ({m.language})",
                     "targets": list(m.databases), "workloads": list(m.workloads),
                     "needs": " ".join(m.debian + m.pip + m.modules + m.commands),
                     "installed": not missing, "missing": list(missing),
                     "what_it_is": m.description})
    if format == "table":
        for row in rows:
            if row["missing"]:
                row["installed"] = f"[red]no: {' '.join(row['missing'])}[/]"
    show("stacks", rows, format, ("stack", "kind", "targets", "workloads", "needs",
                                  "installed", "what_it_is"))


@app.command("workloads")
def list_workloads(format: FormatOption = "table") -> None:
    """Workloads and their operations."""
    rows: list[dict[str, Any]] = [
        {"workload": name, "operations": list(entry.operations), "status": "available",
         "what_it_measures": entry.description} for name, entry in ENTRIES.items()]
    rows += [{"workload": name, "operations": [], "status": "planned",
              "what_it_measures": text} for name, text in PLANNED.items()]
    if format == "table":
        for row in rows:
            colour = "green" if row["status"] == "available" else "yellow"
            row["status"] = f"[{colour}]{row['status']}[/]"
    show("workloads", rows, format)


@app.command("targets")
def list_targets(format: FormatOption = "table") -> None:
    """Target kinds (targets/<kind>/), their URL forms and whether dbstand can start a
    throwaway server of them."""
    from dbstand.targets.kinds import all_kinds

    rows: list[dict[str, Any]] = []
    for kind in all_kinds().values():
        scheme = kind.schemes[0]
        form = (f"{scheme}:///path.db, {scheme}:// (in memory)" if kind.embedded else
                f"{scheme}://user[:password]@host[:port]/db")
        managed = "embedded" if kind.embedded else (
            f"dbstand server up {kind.name}" if kind.managed else None)
        rows.append({"kind": kind.name, "schemes": list(kind.schemes), "url_form": form,
                     "default_port": kind.default_port, "managed_server": managed})
    show("targets", rows, format, ("kind", "url_form", "default_port", "managed_server"))


@app.command("apis")
def list_apis(stack: str | None = typer.Option(
        None, help="Only these stacks, comma-separated")) -> None:
    """Batch APIs per stack (names for `dbstand run batch --api`) and the limit rows."""
    from dbstand.workloads.batch.listing import apis_table

    console.print(apis_table(stack))
