"""ParkingOptions: every run-wide setting of a parking run that is not the engine's.

One frozen value, made by the CLI (or a study), given to `build_cases` and to
`ParkingWorkload` at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.profiles import profile_param

DEFAULT_PASSES = 20          # the study: batches of 20 passes
DEFAULT_BATCHES = 5          # ... 5 batches, 100 passes per configuration

#: the reference stack each stack's server CPU is compared with (the study's CPython +
#: SQLAlchemy); `run parking --baseline` names another
BASELINE = "python-sqlalchemy"


@dataclass(frozen=True)
class ParkingOptions:
    passes: int = DEFAULT_PASSES
    batches: int = DEFAULT_BATCHES
    prefix: str = "dbstand_"
    keep: bool = False           # keep the service's tables after the run
    #: the stack the report compares every stack's server CPU with
    baseline: str = BASELINE
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        if self.passes < 1:
            raise UserError("--passes must be at least 1")
        if self.batches < 2:
            raise UserError("--batches must be at least 2 (a spread needs two)")

    def params(self) -> dict[str, object]:
        """What each case records of them (the baseline is in its metrics)."""
        return {"passes": self.passes, "batches": self.batches, "prefix": self.prefix,
                "keep": self.keep, **profile_param(self.profile)}
