"""The table behind `dbstand list apis`: batch APIs per stack, then the limit rows."""

from __future__ import annotations

from rich.table import Table

from dbstand.console import split_list
from dbstand.workloads.batch.api import limit_apis
from dbstand.workloads.batch.workload import client_class
from dbstand.workloads.catalog import STACKS, get_stack


def apis_table(stacks: str | None) -> Table:
    names = split_list(stacks, "--stack") or [n for n, s in STACKS.items()
                                               if "batch" in s.adapters]
    table = Table(title="batch apis (dbstand run batch --api NAME)")
    for col in ("stack", "api", "ops", "installed", "what it does"):
        table.add_column(col)
    kinds: list[str] = []
    for name in names:
        spec = get_stack(name)
        cls = client_class(spec)
        installed = "[green]yes[/]" if spec.installed else "[red]no[/]"
        for api in cls.apis:
            table.add_row(name, api.name, ", ".join(api.ops), installed, api.description)
        kinds += [k for k in spec.targets if k not in kinds]
    for kind in kinds:
        for api in limit_apis(kind):
            table.add_row(f"[cyan]limit ({kind})[/]", api.name, ", ".join(api.ops), "-",
                          api.description)
    return table
