"""What every study shares: its seed's data file, the claim checks, the report.

A study runs its seed's matrix on this machine through the workload's own code
(the functions `dbstand run <workload>` calls), then builds one report: the seed's
published figures beside the measured ones, each of the seed's claims with the
measured ratio and a verdict by the one rule of verdict.py (reproduced, differs,
inconclusive, or cannot be checked where no stand-in exists), the claims it does not
check with the reason,
and the workload's own report of the run. Absolute figures from another machine
are shown for reference only; verdicts compare ratios within this run.
"""

from __future__ import annotations

import contextlib
import math
import tomllib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dbstand.modes.pinning import DEFAULT_PLACEMENT
from dbstand.report.model import Block, Report, Section
from dbstand.results.store import ResultsFile
from dbstand.studies.claims import (
    RULE,
    ClaimResult,
    Missing,
    Outcome,
    claims_table,
    settle,
    tally,
    unchecked_table,
)
from dbstand.studies.verdict import Estimate
from dbstand.targets.managed import ManagedServer, ServerRecord

if TYPE_CHECKING:
    from dbstand.engine.config import EngineConfig
    from dbstand.workloads.base import Case, Workload

def load_data(name: str) -> dict[str, Any]:
    """The seed's figures and claims (studies/data/NAME.toml)."""
    text = resources.files("dbstand.studies").joinpath("data", f"{name}.toml").read_text(
        encoding="utf-8")
    return tomllib.loads(text)


@contextlib.contextmanager
def started(server: ManagedServer, what: str) -> Iterator[ServerRecord]:
    """A managed server for the study: started under a status line (which must end
    before the run's progress bars start), stopped at the end, also on error."""
    from dbstand.console import console

    try:
        with console.status(f"starting {what} for the study..."):
            record = server.start()
        yield record
    finally:
        server.stop()


@dataclass(frozen=True)
class StudyOptions:
    """How a study runs: the quick variant (laptops, CI) or the seed's sizes."""

    quick: bool = False
    pin: bool = True
    pin_cpus: str = DEFAULT_PLACEMENT
    output: Path | None = None


def placement_of(record: Mapping[str, Any]) -> str | None:
    """The CPU placement a case ran under, as recorded (a served case's `placement`,
    kv's `environment.server.cpu_pinning`); None where the record has none. Two
    figures with different placements give no ratio (verdict.ratio)."""
    pin = record.get("placement") or \
        ((record.get("environment") or {}).get("server") or {}).get("cpu_pinning")
    if not isinstance(pin, Mapping):
        return None
    if not pin.get("enabled"):
        return "unpinned"
    cpus = pin.get("cpus")
    if isinstance(cpus, Mapping) and cpus:
        where = ", ".join(f"{role} {','.join(map(str, c))}" for role, c in sorted(cpus.items())
                          if c)
    else:
        where = f"client {pin.get('client_cpus')}, server {pin.get('server_cpus')}"
    return f"{pin.get('placement', '?')}: {where}"


def finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None


def throughput(record: Mapping[str, Any], shaky: bool = False) -> Estimate:
    """A case's operations (or requests) per second with its 95% interval, its
    unstable tag (or `shaky`) and the CPU placement it ran under."""
    return Estimate(float(record["ops_per_s"]), finite(record.get("ci95_pct")),
                    shaky or bool(record.get("unstable")), placement=placement_of(record))


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def ok(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("status") == "ok"]


class Study(ABC):
    """One seed's study: its matrix, its settings and sizes, its checks."""

    name: ClassVar[str]
    #: the study's sizes and settings: the quick variant's (laptops, CI) and the seed's
    quick_plan: ClassVar[Mapping[str, Any]]
    full_plan: ClassVar[Mapping[str, Any]]

    def __init__(self) -> None:
        self.data = load_data(self.name)

    @property
    def workload(self) -> str:
        """The workload it runs: each study is its workload's seed, of the same name."""
        return self.name

    def plan(self, quick: bool) -> Mapping[str, Any]:
        return self.quick_plan if quick else self.full_plan

    # --- what each study says ----------------------------------------------------------
    @abstractmethod
    def describe(self, quick: bool) -> str:
        """What runs, in one paragraph (the matrix, sizes, servers, stand-ins)."""

    def run(self, options: StudyOptions) -> ResultsFile:
        """Start the study's servers, run its matrix, stop them; the results."""
        return self.measure(self.plan(options.quick), options)

    @abstractmethod
    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        """`run` with its variant's plan `p` (quick_plan or full_plan): the study's own
        servers, matrix and settings."""

    @abstractmethod
    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        """The seed's figures beside the measured ones."""

    def execute(self, workload: Workload, cases: list[Case], config: EngineConfig,
                options: StudyOptions) -> ResultsFile:
        """Run the study's cases into its results file (given, or the default one named
        study-<name>), the command line redacted."""
        from dbstand.console import console, redacted_argv
        from dbstand.workloads.execution import RunRequest, default_output, execute

        path = options.output or default_output(f"study-{self.name}")
        return execute(RunRequest(workload, cases, config, path, redacted_argv()), console)

    def checks(self) -> dict[str, Callable[[list[dict[str, Any]], Mapping[str, Any]], Outcome]]:
        """Check name -> method (`check_<name>`)."""
        return {name[len("check_"):]: getattr(self, name) for name in dir(self)
                if name.startswith("check_")}

    # --- shared ------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return str(self.data["source"]["title"])

    @property
    def seed(self) -> str:
        return str(self.data["source"]["seed"])

    def claim_unit(self, claim: Mapping[str, Any]) -> str:
        return "x"

    def stand_in_of(self, config: str) -> str:
        """The stack standing in for one of the seed's configurations ('' if none)."""
        entry = (self.data.get("stand_ins") or {}).get(config) or ""
        return str(entry.get("stack") or "" if isinstance(entry, Mapping) else entry)

    def stand_in(self, claim: Mapping[str, Any]) -> str:
        """Which stand-in a claim's verdict comes from (the study's, unless the study
        names the stacks per claim)."""
        return str(self.data["source"].get("stand_in", ""))

    def check_no_stand_in(self, records: list[dict[str, Any]],
                          claim: Mapping[str, Any]) -> Outcome:
        """A claim about a configuration with no stand-in: checked against the study's
        own table of stand-ins, so a stand-in added later is not left unmeasured."""
        found = self.stand_in_of(str(claim["config"]))
        if found:
            return f"{claim['config']} has a stand-in ({found}) but no check of this claim"
        return Missing(str(claim["missing"]))

    def claims(self, records: list[dict[str, Any]]) -> list[ClaimResult]:
        out = []
        checks = self.checks()
        for claim in self.data.get("claims", []):
            kind = str(claim.get("check", "ratio"))
            outcome: Outcome = checks[kind](records, claim) if kind in checks else \
                f"no check {kind!r} in this version"
            out.append(settle(claim, outcome, self.claim_unit(claim), self.stand_in(claim)))
        return out

    def source_block(self, quick: bool) -> list[Block]:
        src = self.data["source"]
        lines = [f"Seed {src['seed']} ({src.get('language', '')}): {src['title']}.",
                 f"The seed's machine: {src.get('machine', '-')}."]
        if src.get("method"):
            lines.append(f"The seed's method: {src['method']}.")
        if src.get("stand_in"):
            lines.append(f"Stand-in: {src['stand_in']}.")
        lines.append(f"This run: {self.describe(quick)}")
        lines.append("Absolute figures from another machine and another decade are shown "
                     "for reference only: verdicts compare ratios within this run.")
        return [" ".join(lines)]

    def report(self, results: ResultsFile, quick: bool) -> tuple[Report, list[ClaimResult]]:
        """The study's report: source, published beside measured, claims, then the
        workload's own report of the run."""
        from dbstand.workloads.render import build_report

        records = results.cases
        own = build_report(results)
        claims = self.claims(records)
        sections = [Section("What is reproduced", self.source_block(quick)),
                    Section("Published beside measured", self.published(records)),
                    Section("Claims", [RULE, claims_table(claims),
                                       f"Verdicts: {tally(claims)}.",
                                       *([unchecked_table(self.data["unchecked"])]
                                         if self.data.get("unchecked") else [])]),
                    *own.sections]
        failed = sum(1 for r in records if r.get("status") != "ok")
        notes = [*own.notes]
        if failed:
            notes.insert(0, f"{failed} case(s) failed: claims needing them cannot be tested")
        variant = "quick" if quick else "full"
        report = Report(f"dbstand study {self.name} ({variant}): {self.title}", sections,
                        notes=notes, caption=own.caption, status=own.status,
                        complete=own.complete, header=own.header,
                        environment=own.environment, data=own.data,
                        data_columns=own.data_columns,
                        extra={**own.extra, "study": self.name, "seed": self.seed,
                               "variant": variant,
                               "claims": [c.as_dict() for c in claims]},
                        warnings=own.warnings, measurements=own.measurements)
        return report, claims
