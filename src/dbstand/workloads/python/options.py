"""PythonOptions: every run-wide setting of a python run that is not the engine's.

One frozen value, made by the CLI and given to `PythonWorkload` at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT, PLACEMENTS
from dbstand.profiles import profile_param


@dataclass(frozen=True)
class PythonOptions:
    #: `--file`: the bench file (docs/python-bench.md)
    file: str = "bench.py"
    pin: bool = True
    pin_cpus: str = DEFAULT_PLACEMENT
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        """A bad value fails here, before anything runs (the file itself is loaded and
        checked by the workload's constructor, also before anything runs)."""
        if not self.file:
            raise UserError("--file: name the bench file")
        if self.pin_cpus not in PLACEMENTS:
            raise UserError(f"--pin-cpus takes {' or '.join(PLACEMENTS)}, "
                            f"not {self.pin_cpus!r}")

    def params(self) -> dict[str, object]:
        """What each case records of them (the results file's case params)."""
        return {"file": self.file, **profile_param(self.profile)}
