"""A claim checked: what a study's check returns (labelled estimates, a Judged verdict,
a Missing stand-in, or why nothing was measured), the claim's row settled from it by
verdict.py's one rule, and the tables and tally of a study's report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbstand.report.model import Column, Table
from dbstand.studies.verdict import (
    CANNOT,
    DIFFERS,
    INCONCLUSIVE,
    REPRODUCED,
    Estimate,
    combine,
    judge,
)


@dataclass(frozen=True)
class Judged:
    """A verdict a check reached through verdict.py itself (an ordering, a sweep's
    best level), with what it measured."""

    verdict: str
    measured: str
    reason: str = ""


@dataclass(frozen=True)
class Missing:
    """No stand-in exists for what the claim is about: what is missing."""

    what: str


#: what a check returns: labelled estimates to judge, a Judged, a Missing stand-in,
#: or why the run has nothing to judge (a case it needs did not run)
Outcome = list[tuple[str, Estimate]] | Judged | Missing | str


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
    stand_in: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "claim": self.claim, "where": self.where, "seed": self.seed,
                "measured": self.measured, "verdict": self.verdict, "reason": self.reason,
                "note": self.note, "stand_in": self.stand_in}


def settle(claim: Mapping[str, Any], outcome: Outcome, unit: str = "x",
           stand_in: str = "") -> ClaimResult:
    """A claim's row from what its check found, by the one rule of verdict.py."""
    note = str(claim.get("note", ""))
    if "spread_from" in claim:
        note += ("; " if note else "") + f"about-band ±{float(claim['spread']):.0%}: " \
            f"{claim['spread_from']}"
    head = dict(id=str(claim["id"]), claim=str(claim["claim"]),
                where=str(claim.get("where", "")), seed=str(claim.get("seed", "")),
                note=note)
    if isinstance(outcome, Missing):
        return ClaimResult(**head, measured="-", verdict=CANNOT,
                           reason=f"no stand-in: {outcome.what}")
    head["stand_in"] = stand_in
    if isinstance(outcome, str):
        return ClaimResult(**head, measured="-", verdict=INCONCLUSIVE,
                           reason=f"not measured in this run: {outcome}")
    if isinstance(outcome, Judged):
        return ClaimResult(**head, measured=outcome.measured, verdict=outcome.verdict,
                           reason=outcome.reason)
    if not outcome:
        return ClaimResult(**head, measured="-", verdict=INCONCLUSIVE,
                           reason="not measured in this run: the cases it needs did not "
                                  "run or failed")
    verdicts = [(label, est, *judge(est, claim)) for label, est in outcome]
    measured = "; ".join(f"{label} {est.text(unit)}".strip() for label, est, _, _ in verdicts)
    verdict = combine([v for _, _, v, _ in verdicts])
    shown = [(label, why) for label, _, v, why in verdicts if v == verdict] \
        if verdict != REPRODUCED else [(label, why) for label, _, _, why in verdicts]
    reason = "; ".join(f"{label}: {why}".strip(": ") for label, why in shown[:4])
    if len(shown) > 4:
        reason += f"; {len(shown) - 4} more alike"
    if len(verdicts) > 1:
        counts = {v: sum(1 for *_, w, _ in verdicts if w == v)
                  for v in (REPRODUCED, DIFFERS, INCONCLUSIVE)}
        reason = ", ".join(f"{n} {v}" for v, n in counts.items() if n) + f" of " \
            f"{len(verdicts)}: " + reason
    if any(est.shaky for _, est in outcome):
        reason += " (some timings are from cases that hit the iteration cap: unstable)"
    return ClaimResult(**head, measured=measured, verdict=verdict, reason=reason)


def claims_table(results: Sequence[ClaimResult]) -> Table:
    columns = [Column("id", "claim", names_row=True),
               Column("text", "what the seed says", prose=True),
               Column("seed", "seed"),
               Column("measured", "measured here [95% interval]", prose=True),
               Column("verdict", "verdict"), Column("stand_in", "stand-in", prose=True),
               Column("reason", "why", prose=True)]
    rows = [{"id": r.id, "text": r.claim + (f" [{r.note}]" if r.note else ""),
             "seed": r.seed, "measured": r.measured, "verdict": r.verdict.upper(),
             "stand_in": r.stand_in or "-", "reason": r.reason} for r in results]
    styles: list[str | None] = [None if r.verdict == REPRODUCED else
                                "failed" if r.verdict == DIFFERS else "unstable"
                                for r in results]
    return Table("The seed's claims, checked on this run (ratios within this run)", columns,
                 rows, styles, anchor="claims")


RULE = ("Verdict rule (the same for every claim): REPRODUCED when the whole 95% interval "
        "of the measured figure satisfies the claim, DIFFERS when the whole interval "
        "contradicts it, INCONCLUSIVE otherwise (also when a case it needs did not run, or "
        "two figures were measured under different CPU placements); CANNOT BE CHECKED only "
        "where no stand-in exists. A ratio's interval is Fieller's, from both means' "
        "intervals. \"About X\" means X with the seed's own spread where it states one, "
        "else ±20%. An ordering holds only when every adjacent pair's ratio interval lies "
        "above 1.")


def unchecked_table(entries: Sequence[Mapping[str, Any]]) -> Table:
    """The seed's statements this study does not judge, each with its reason."""
    return Table("The seed's claims not checked here", [
        Column("id", "claim"), Column("text", "what the seed says"),
        Column("where", "where"), Column("reason", "why not checked")],
        [{"id": str(e["id"]), "text": str(e["claim"]), "where": str(e.get("where", "")),
          "reason": str(e["reason"])} for e in entries], anchor="not-checked")


def tally(results: Sequence[ClaimResult]) -> str:
    counts = {v: sum(1 for r in results if r.verdict == v)
              for v in (REPRODUCED, DIFFERS, INCONCLUSIVE, CANNOT)}
    return ", ".join(f"{n} {v}" for v, n in counts.items())
