"""KvOptions: every run-wide setting of a kv run that is not the engine's.

One frozen value, made by the CLI (or a study) and given to `KvWorkload` at
construction and to `kv_cases`; the workload reads its settings only from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT, PLACEMENTS
from dbstand.profiles import profile_param
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix

DEFAULT_ROWS = 10_000


@dataclass(frozen=True)
class KvOptions:
    rows: int = DEFAULT_ROWS
    distribution: str = "uniform"
    prefix: str = DEFAULT_PREFIX
    #: keep the table after each case
    keep: bool = False
    #: `--baseline STACK[@MODE][@LOOP]`, recorded with every case for the report
    baseline: str | None = None
    #: place every case by the placement table (modes/pinning.py); `--no-pin`: none
    pin: bool = True
    #: `--pin-cpus`: a candidate of the placement table (default: the table's)
    pin_cpus: str = DEFAULT_PLACEMENT
    #: `--cluster` (local:N, tcp://, tls://): the clients on a Dask cluster's workers
    cluster: str | None = None
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def check(self) -> None:
        """A bad value fails here, before anything runs."""
        from dbstand.workloads.kv.table import BaselineSpec

        check_prefix(self.prefix)
        if self.pin_cpus not in PLACEMENTS:
            raise UserError(f"--pin-cpus takes {' or '.join(PLACEMENTS)}, "
                            f"not {self.pin_cpus!r}")
        if self.baseline is not None:
            try:
                BaselineSpec.parse(self.baseline)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        if self.cluster is not None:
            from dbstand.distributed.spec import parse_cluster

            parse_cluster(self.cluster)

    def params(self) -> dict[str, object]:
        """What each case records of them (the results file's case params)."""
        return {"rows": self.rows, "distribution": self.distribution,
                "prefix": self.prefix, "keep": self.keep, **profile_param(self.profile)}
