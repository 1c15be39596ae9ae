"""Comparing two runs: ratios per matching case, and whether the change is significant.

Cases match on what was measured (workload, stack, target kind, mode, op, params),
not on the target URL, whose port changes with every throwaway server. Significance
is Welch's two-sided t-test at 5% on the counted iteration times of both runs (the
test pyperf's compare_to uses); a change must also exceed `threshold_pct` to be
called faster or slower, so tiny but "significant" shifts on long runs are not
reported as regressions.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Any

from dbstand.engine.stats import t975
from dbstand.results.store import ResultsFile

IGNORED_PARAMS = ("prefix", "keep")


def case_key(record: dict[str, Any]) -> str:
    params = {k: v for k, v in (record.get("params") or {}).items() if k not in IGNORED_PARAMS}
    return json.dumps([record.get("workload"), record.get("stack"), record.get("target_kind"),
                       record.get("mode"), record.get("op"), params], sort_keys=True)


def counted_times(record: dict[str, Any]) -> list[float]:
    times = list((record.get("iteration_s") or {}).get("all") or [])
    n = record.get("iterations") or len(times)
    return times[-n:] if n else times


@dataclass(frozen=True)
class Comparison:
    label: str
    before_ops: float
    after_ops: float
    ratio: float            # after / before throughput: > 1 is faster
    t_stat: float | None
    significant: bool
    verdict: str            # faster | slower | no change (not significant or below threshold) | n/a
    unstable: bool


def welch(a: list[float], b: list[float]) -> tuple[float, bool] | None:
    """Welch's t statistic and whether |t| exceeds the two-sided 5% critical value."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = math.sqrt(va + vb)
    diff = statistics.fmean(b) - statistics.fmean(a)
    if se == 0:
        return (math.inf if diff else 0.0), diff != 0
    df = (va + vb) ** 2 / ((va**2) / (len(a) - 1) + (vb**2) / (len(b) - 1))
    t = diff / se
    return t, abs(t) > t975(max(1, math.floor(df)))


def compare(before: ResultsFile, after: ResultsFile, threshold_pct: float = 5.0
            ) -> tuple[list[Comparison], list[str], list[str]]:
    """Matched comparisons, and labels of cases only in `before` / only in `after`."""
    old = {case_key(r): r for r in before.cases if r.get("status") == "ok"}
    new = {case_key(r): r for r in after.cases if r.get("status") == "ok"}
    out = []
    for key, b in new.items():
        a = old.get(key)
        if a is None:
            continue
        label = f"{b['workload']} {b['stack']} {b['op']} [{b['mode']}]"
        ratio = b["ops_per_s"] / a["ops_per_s"] if a.get("ops_per_s") else math.nan
        test = welch(counted_times(a), counted_times(b))
        t_stat, significant = (test if test else (None, False))
        if test is None:
            verdict = "n/a"
        elif significant and abs(ratio - 1) * 100 >= threshold_pct:
            verdict = "faster" if ratio > 1 else "slower"
        else:
            verdict = "no change"
        out.append(Comparison(label, a["ops_per_s"], b["ops_per_s"], ratio, t_stat,
                              significant, verdict, bool(a.get("unstable") or
                                                         b.get("unstable"))))
    only_before = [_label(r) for k, r in old.items() if k not in new]
    only_after = [_label(r) for k, r in new.items() if k not in old]
    return out, only_before, only_after


def _label(r: dict[str, Any]) -> str:
    return f"{r.get('workload')} {r.get('stack')} {r.get('op')} [{r.get('mode')}]"
