"""BatchOptions: every run-wide setting of a batch run that is not the engine's.

One frozen value, made by the CLI (or a study), given to `build_cases` and to
`BatchWorkload` at construction.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dbstand.profiles import profile_param

DEFAULT_PAGE_SIZE = 100        # the study's page_size (psycopg2's default)
MAX_PAGE_SIZE = 10_000         # 2 parameters a row: stays under every driver's limit
DEFAULT_LARGE_ROWS = 50_000
DEFAULT_LARGE_REPEATS = 3
#: settings of the whole run, not of a case (kept out of the cases' params)
RUN_WIDE = frozenset({"baseline", "profile"})


@dataclass(frozen=True)
class BatchOptions:
    """The batch parameters shared by every case of a run."""

    page_size: int = DEFAULT_PAGE_SIZE
    large_rows: int = DEFAULT_LARGE_ROWS
    large_repeats: int = DEFAULT_LARGE_REPEATS
    analyze: bool = True
    prefix: str = "dbstand_"
    keep: bool = False
    #: `--baseline [STACK:]API`: what every api is compared with (recorded per case)
    baseline: str | None = None
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False

    def params(self) -> dict[str, Any]:
        """What each case records of them (the run-wide baseline is in its metrics)."""
        return {**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                   if f.name not in RUN_WIDE}, **profile_param(self.profile)}

    @classmethod
    def of_case(cls, params: dict[str, Any]) -> BatchOptions:
        """The options a case was built with, from its params."""
        names = {f.name for f in dataclasses.fields(cls)} - RUN_WIDE
        return cls(**{k: v for k, v in params.items() if k in names},
                   profile=bool(params.get("profile")))
