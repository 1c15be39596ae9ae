"""WebtechOptions: every run-wide setting of a webtech run that is not the engine's.

One frozen value, made by the CLI (or a study), given to `build_cases` and to
`WebtechWorkload` at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.profiles import profile_param
from dbstand.workloads.http_load import STEADY, check_load

DEFAULT_REQUESTS = 1_000      # per client and run: the study's single user sent 1,000
DEFAULT_REPEATS = 3           # the study repeated each measurement 3 times (--load seed)
MIN_REPEATS = 5               # the steady load's runs before the stop rule may stop


@dataclass(frozen=True)
class WebtechOptions:
    """Run-wide settings of a webtech run (a case's params record all but the cluster)."""

    requests: int = DEFAULT_REQUESTS
    repeats: int = MIN_REPEATS
    #: steady (warm-up until steady, the stop rule) or seed (the study's literal load)
    load: str = STEADY
    duration_s: float | None = None
    open_duration_s: float = 5.0
    keepalive: bool = True
    workers: int | None = None
    prefix: str = "dbstand_"
    max_error_rate: float = 0.01
    #: `--cluster`: each worker of this Dask cluster runs a share of the load
    cluster: str | None = None
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        if not 1 <= self.requests <= 10_000_000:
            raise UserError("--requests must be from 1 to 10,000,000")
        if self.duration_s is not None and not 0 < self.duration_s <= 3600:
            raise UserError("--duration must be from 0 to 3600 seconds")
        if self.workers is not None and not 1 <= self.workers <= 1024:
            raise UserError(f"--workers must be from 1 to 1024 (got {self.workers})")
        check_load(self.load, self.repeats, self.max_error_rate)

    def params(self) -> dict[str, object]:
        """What each case records of them."""
        return {"requests": self.requests, "repeats": self.repeats, "load": self.load,
                "duration_s": self.duration_s, "keepalive": self.keepalive,
                "workers": self.workers, "prefix": self.prefix,
                "max_error_rate": self.max_error_rate, **profile_param(self.profile)}
