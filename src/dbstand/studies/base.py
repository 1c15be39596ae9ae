"""What every study shares: its seed's data file, the claim checks, the report.

A study runs its seed's matrix on this machine through the workload's own code
(the functions `dbstand run <workload>` calls), then builds one report: the seed's
published figures beside the measured ones, each of the seed's claims with the
measured ratio and a verdict (reproduced, differs, cannot test, with the reason),
and the workload's own report of the run. Absolute figures from another machine
are shown for reference only; verdicts compare ratios within this run.
"""

from __future__ import annotations

import contextlib
import math
import tomllib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from dbstand.modes.pinning import DEFAULT_PLACEMENT
from dbstand.report.model import Block, Column, Report, Section, Table
from dbstand.results.store import ResultsFile
from dbstand.targets.managed import ManagedServer, ServerRecord

REPRODUCED = "reproduced"
DIFFERS = "differs"
CANNOT = "cannot test"


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


@dataclass(frozen=True)
class Estimate:
    """A measured figure or ratio with its 95% interval (half-width in % of it)."""

    value: float
    ci_pct: float | None = None
    shaky: bool = False           # from an unstable or bimodal case

    @property
    def low(self) -> float:
        return max(0.0, self.value * (1 - (self.ci_pct or 0) / 100))

    @property
    def high(self) -> float:
        return self.value * (1 + (self.ci_pct or 0) / 100)

    def text(self, unit: str = "x", digits: int = 2) -> str:
        body = f"{self.value:,.{digits}f}{unit}"
        if self.ci_pct is not None and math.isfinite(self.ci_pct):
            body += f" ±{self.ci_pct:.0f}%"
        return body + (" (unstable)" if self.shaky else "")


def divide(top: Estimate, bottom: Estimate) -> Estimate:
    """top / bottom; the interval combines both sides' (in quadrature)."""
    ci = None
    if top.ci_pct is not None and bottom.ci_pct is not None:
        ci = math.hypot(top.ci_pct, bottom.ci_pct)
    return Estimate(top.value / bottom.value, ci, top.shaky or bottom.shaky)


def finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None


@dataclass(frozen=True)
class Judged:
    """A structural check's own verdict (an order, a sweep, a scaling exponent)."""

    verdict: str
    measured: str
    reason: str = ""


#: what a check returns: labelled estimates to judge, a Judged, or why it cannot run
Outcome = list[tuple[str, Estimate]] | Judged | str


def judge(est: Estimate, claim: Mapping[str, Any]) -> tuple[str, str]:
    """The verdict of one estimate against the claim's expectation."""
    expect = claim.get("expect", "greater")
    interval = f" (interval {est.low:.2f}-{est.high:.2f})" if est.ci_pct else ""
    if expect in ("greater", "less"):
        than = float(claim.get("than", 1.0))
        above, below = est.low > than, est.high < than
        if (expect == "greater" and above) or (expect == "less" and below):
            return REPRODUCED, f"{'above' if above else 'below'} {than:g}{interval}"
        if above or below:
            return DIFFERS, f"{'above' if above else 'below'} {than:g}, the other way{interval}"
        return DIFFERS, f"within noise: the interval holds {than:g}{interval}"
    if expect == "about":
        target, tolerance = float(claim["value"]), float(claim.get("tolerance", 0.1))
        if abs(est.value - target) <= tolerance * target:
            return REPRODUCED, f"within ±{tolerance:.0%} of {target:g}"
        if est.ci_pct and est.low <= target <= est.high:
            return REPRODUCED, f"the interval holds {target:g}{interval}"
        return DIFFERS, f"beyond ±{tolerance:.0%} of {target:g}{interval}"
    if expect == "between":
        low, high = float(claim["low"]), float(claim["high"])
        if low <= est.value <= high:
            return REPRODUCED, f"between {low:g} and {high:g}"
        return DIFFERS, f"outside {low:g}-{high:g}"
    if expect == "at_least":
        value = float(claim["value"])
        if est.value >= value:
            return REPRODUCED, f"at least {value:g}{interval}"
        return DIFFERS, f"below {value:g}{interval}"
    raise ValueError(f"unknown expectation {expect!r}")


@dataclass
class ClaimResult:
    id: str
    claim: str
    where: str
    seed: str
    measured: str
    verdict: str
    reason: str
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "claim": self.claim, "where": self.where, "seed": self.seed,
                "measured": self.measured, "verdict": self.verdict, "reason": self.reason,
                "note": self.note}


def settle(claim: Mapping[str, Any], outcome: Outcome, unit: str = "x") -> ClaimResult:
    """A claim's row from what its check found."""
    head = dict(id=str(claim["id"]), claim=str(claim["claim"]),
                where=str(claim.get("where", "")), seed=str(claim.get("seed", "")),
                note=str(claim.get("note", "")))
    if isinstance(outcome, str):
        return ClaimResult(**head, measured="-", verdict=CANNOT, reason=outcome)
    if isinstance(outcome, Judged):
        return ClaimResult(**head, measured=outcome.measured, verdict=outcome.verdict,
                           reason=outcome.reason)
    if not outcome:
        return ClaimResult(**head, measured="-", verdict=CANNOT,
                           reason="the cases it needs did not run or failed")
    verdicts = [(label, est, *judge(est, claim)) for label, est in outcome]
    measured = "; ".join(f"{label} {est.text(unit)}".strip() for label, est, _, _ in verdicts)
    failing = [(label, reason) for label, _, v, reason in verdicts if v != REPRODUCED]
    shaky = any(est.shaky for _, est in outcome)
    if not failing:
        reasons = list(dict.fromkeys(r for *_, r in verdicts))
        reason = "; ".join(reasons) if len(reasons) == 1 else \
            f"all {len(verdicts)}: " + "; ".join(reasons[:2])
        verdict = REPRODUCED
    else:
        verdict = DIFFERS
        reason = "; ".join(f"{label}: {why}".strip(": ") for label, why in failing[:4])
        if len(verdicts) > 1:
            reason = f"{len(failing)} of {len(verdicts)} differ: {reason}"
    if shaky:
        reason += " (from unstable cases: rerun on a quieter machine)"
    return ClaimResult(**head, measured=measured, verdict=verdict, reason=reason)


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def ok(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("status") == "ok"]


def claims_table(results: Sequence[ClaimResult]) -> Table:
    columns = [Column("id", "claim"), Column("text", "what the seed says"),
               Column("seed", "seed"), Column("measured", "measured here"),
               Column("verdict", "verdict"), Column("reason", "why")]
    rows = [{"id": r.id, "text": r.claim + (f" [{r.note}]" if r.note else ""),
             "seed": r.seed, "measured": r.measured, "verdict": r.verdict.upper(),
             "reason": r.reason} for r in results]
    styles: list[str | None] = [None if r.verdict == REPRODUCED else
                                "failed" if r.verdict == DIFFERS else "unstable"
                                for r in results]
    return Table("The seed's claims, checked on this run (ratios within this run)", columns,
                 rows, styles, anchor="claims")


def tally(results: Sequence[ClaimResult]) -> str:
    counts = {v: sum(1 for r in results if r.verdict == v)
              for v in (REPRODUCED, DIFFERS, CANNOT)}
    return ", ".join(f"{n} {v}" for v, n in counts.items())


class Study(ABC):
    """One seed's study: its matrix, its settings and sizes, its checks."""

    name: ClassVar[str]
    workload: ClassVar[str]

    def __init__(self) -> None:
        self.data = load_data(self.name)

    # --- what each study says ----------------------------------------------------------
    @abstractmethod
    def describe(self, quick: bool) -> str:
        """What runs, in one paragraph (the matrix, sizes, servers, stand-ins)."""

    @abstractmethod
    def run(self, options: StudyOptions) -> ResultsFile:
        """Start the study's servers, run its matrix, stop them; the results."""

    @abstractmethod
    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        """The seed's figures beside the measured ones."""

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

    def claims(self, records: list[dict[str, Any]]) -> list[ClaimResult]:
        out = []
        checks = self.checks()
        for claim in self.data.get("claims", []):
            kind = str(claim.get("check", "ratio"))
            if kind == "cannot":
                outcome: Outcome = str(claim.get("reason", "not measurable here"))
            elif kind not in checks:
                outcome = f"no check {kind!r} in this version"
            else:
                outcome = checks[kind](records, claim)
            out.append(settle(claim, outcome, self.claim_unit(claim)))
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
                    Section("Claims", [claims_table(claims),
                                       f"Verdicts: {tally(claims)}."]),
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


@dataclass
class Cell:
    """One published figure and its measured counterpart."""

    seed: float | None
    here: float | None
    seed_ref: float | None = None
    here_ref: float | None = None
    flags: list[str] = field(default_factory=list)

    def text(self, digits: int = 0, unit: str = "") -> str:
        def one(value: float | None, ref: float | None) -> str:
            if value is None:
                return "-"
            body = f"{value:,.{digits}f}{unit}"
            if ref:
                body += f" ({value / ref:.2f}x)"
            return body

        flag = f" {' '.join(self.flags)}" if self.flags else ""
        return f"{one(self.seed, self.seed_ref)} | {one(self.here, self.here_ref)}{flag}"
