"""ScriptOptions: every run-wide setting of a script run that is not the engine's.

One frozen value, made by the CLI and given to `ScriptWorkload` at construction and to
`script_cases`; the workload reads its settings only from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT, PLACEMENTS
from dbstand.profiles import profile_param
from dbstand.sql.ownership import DEFAULT_PREFIX, check_prefix


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
    #: the prefix of dbstand's registry table
    prefix: str = DEFAULT_PREFIX
    pin: bool = True
    pin_cpus: str = DEFAULT_PLACEMENT
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        """A bad value fails here, before anything runs (the scripts themselves are
        read by the workload's constructor, also before anything runs)."""
        check_prefix(self.prefix)
        if not self.files:
            raise UserError("--file: give at least one script or built-in")
        if self.scale is not None and self.scale < 1:
            raise UserError("--scale must be at least 1")
        if self.pin_cpus not in PLACEMENTS:
            raise UserError(f"--pin-cpus takes {' or '.join(PLACEMENTS)}, "
                            f"not {self.pin_cpus!r}")

    def params(self) -> dict[str, object]:
        """What each case records of them (the results file's case params)."""
        return {"files": list(self.files), "init": self.init, "scale": self.scale,
                "prefix": self.prefix, **profile_param(self.profile)}
