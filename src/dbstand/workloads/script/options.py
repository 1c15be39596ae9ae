"""The script workload's run-wide settings, one frozen value given to its constructor."""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.modes.pinning import DEFAULT_PLACEMENT
from dbstand.sql.ownership import DEFAULT_PREFIX


@dataclass(frozen=True)
class ScriptOptions:
    #: `--file` values: paths or built-in names, each with an optional `@weight`
    files: tuple[str, ...] = ("tpcb-like",)
    #: `--init`: create and fill pgbench's tables (registered as dbstand's) first
    init: bool = False
    #: `--scale`: the tables' size for --init, and `:scale` (default: read from the
    #: table pgbench_branches when it exists, else 1)
    scale: int | None = None
    #: `--define NAME=VALUE`: variables every transaction starts with
    defines: tuple[tuple[str, int | float | str], ...] = ()
    #: `--keep`: leave the tables --init made (and their registry entries) in place
    keep: bool = False
    prefix: str = DEFAULT_PREFIX
    pin: bool = True
    pin_cpus: str = DEFAULT_PLACEMENT
