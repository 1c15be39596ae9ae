"""`dbstand list`: what dbstand can run, and whether this machine has what it needs."""

from __future__ import annotations

import typer
from rich.table import Table

from dbstand.cli.common import console
from dbstand.stacks.catalog import STACKS
from dbstand.workloads import ENTRIES, PLANNED

app = typer.Typer(help="List stacks, workloads or targets.", no_args_is_help=True)


@app.command("stacks")
def list_stacks(workload: str | None = typer.Option(
        None, help="Only the stacks implementing this workload")) -> None:
    """Stacks: in-process ones (drivers, ORMs) and server stacks (manifests), with what
    they need and whether it is installed."""
    from dbstand.stacks.build import missing_debian
    from dbstand.stacks.manifest import all_manifests

    table = Table(title="stacks")
    for col in ("stack", "kind", "targets", "workloads", "needs", "installed", "what it is"):
        table.add_column(col, overflow="fold")
    for spec in STACKS.values():
        if workload is not None and workload not in spec.workloads:
            continue
        versions = spec.versions()
        needs = ", ".join(f"{p} {v}" if v not in ("missing", "builtin") else p
                          for p, v in versions.items())
        table.add_row(spec.name, "in-process", ", ".join(spec.targets),
                      ", ".join(spec.workloads), needs,
                      "[green]yes[/]" if spec.installed else "[red]no[/]", spec.description)
    for m in all_manifests().values():
        if workload is not None and not m.implements(workload):
            continue
        missing = missing_debian(m.debian)
        table.add_row(m.name, f"server ({m.language})", ", ".join(m.databases) or "-",
                      ", ".join(m.workloads),
                      " ".join(m.debian + m.pip + m.modules + m.commands) or "-",
                      "[green]yes[/]" if not missing else f"[red]no: {' '.join(missing)}[/]",
                      m.description)
    console.print(table)


@app.command("workloads")
def list_workloads() -> None:
    """Workloads and their operations."""
    table = Table(title="workloads")
    for col in ("workload", "operations", "status", "what it measures"):
        table.add_column(col)
    for name, entry in ENTRIES.items():
        table.add_row(name, ", ".join(entry.operations), "[green]available[/]",
                      entry.description)
    for name, text in PLANNED.items():
        table.add_row(name, "", "[yellow]planned[/]", text)
    console.print(table)


@app.command("targets")
def list_targets() -> None:
    """Target kinds (targets/<kind>/), their URL forms and whether dbstand can start a
    throwaway server of them."""
    from dbstand.targets.kinds import all_kinds

    table = Table(title="targets")
    for col in ("kind", "URL form", "default port", "managed server"):
        table.add_column(col)
    for kind in all_kinds().values():
        scheme = kind.schemes[0]
        form = (f"{scheme}:///path.db, {scheme}:// (in memory)" if kind.embedded else
                f"{scheme}://user[:password]@host[:port]/db")
        managed = "embedded" if kind.embedded else (
            f"dbstand server up {kind.name}" if kind.managed else "-")
        table.add_row(kind.name, form, str(kind.default_port or "-"), managed)
    console.print(table)


@app.command("apis")
def list_apis(stack: str | None = typer.Option(
        None, help="Only these stacks, comma-separated")) -> None:
    """Batch APIs per stack (names for `dbstand run batch --api`) and the limit rows."""
    from dbstand.workloads.batch.listing import apis_table

    console.print(apis_table(stack))
