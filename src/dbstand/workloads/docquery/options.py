"""DocqueryOptions: every run-wide setting of a docquery run that is not the engine's.

One frozen value, made by the CLI (or a study), given to `build_cases` and to
`DocqueryWorkload` at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.profiles import profile_param
from dbstand.workloads.http_load import STEADY, check_load


@dataclass(frozen=True)
class DocqueryOptions:
    """Run-wide settings of a docquery run (a case's params record all but the cluster)."""

    size: int = 1_000_000
    seed: int = 3
    repeats: int = 5
    #: steady (warm-up until steady, the stop rule) or seed (the study's literal load)
    load: str = STEADY
    open_duration_s: float = 5.0
    prefix: str = "dbstand_"
    max_error_rate: float = 0.01
    #: `--cluster`: each worker of this Dask cluster runs a share of the load
    cluster: str | None = None
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        if not 30 <= self.size <= 100_000_000:
            raise UserError("--size must be from 30 to 100,000,000 documents")
        check_load(self.load, self.repeats, self.max_error_rate)

    def params(self) -> dict[str, object]:
        """What each case records of them."""
        return {"size": self.size, "seed": self.seed, "repeats": self.repeats,
                "load": self.load,
                "prefix": self.prefix, "max_error_rate": self.max_error_rate,
                **profile_param(self.profile)}
