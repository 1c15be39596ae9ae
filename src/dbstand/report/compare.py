"""Comparing runs: per matching case, the change of its headline figure with a 95%
confidence interval and a significance test, and a CI gate.

Cases match on what was measured (report.model.case_key: workload, stack, target
kind, mode, op, params), not on the target URL, whose port changes with every
throwaway server. The figures and samples come from each workload's report
(report.model.Measurement), so this module knows no workload.

The test is Welch's two-sided t-test at 5% on the per-operation times of the counted
iterations of both runs. pyperf's compare_to uses Student's pooled-variance t-test,
which needs as many values on both sides (it gives up on unequal counts and calls
the change significant) and assumes equal variances; dbstand's stop rule ends each
case after its own number of iterations, and a regression often changes the spread
too, so Welch's unequal-variance test fits. docs/compare.md gives the details.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from dbstand.errors import UserError
from dbstand.report.model import Measurement, Report

ALPHA = 0.05
#: environment fields that must agree for absolute figures to be comparable
ENV_FIELDS = ("cpu_model", "cpu_logical", "machine", "python")
ARCHES = ("x86_64", "amd64", "aarch64", "arm64", "armv7l", "ppc64le", "s390x", "riscv64",
          "i686", "i386")


# --- Student's t distribution (no SciPy: a continued fraction for the incomplete beta)
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` (fractional) degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p_two_sided: float, df: float) -> float:
    """The t with P(|T| >= t) = p_two_sided (bisection: precise enough for intervals)."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_two_sided_p(mid, df) > p_two_sided:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class Welch:
    """Welch's test on the difference of means `after - before`, with its interval."""

    diff: float
    low: float
    high: float
    t: float
    df: float
    p: float

    @property
    def significant(self) -> bool:
        return self.p < ALPHA


def welch(a: list[float], b: list[float]) -> Welch | None:
    """None when a side has fewer than 2 samples (no variance, no test)."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(b) - statistics.fmean(a)
    se = math.sqrt(va + vb)
    if se == 0:
        t = math.inf if diff else 0.0
        return Welch(diff, diff, diff, t, math.inf, 0.0 if diff else 1.0)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    t = diff / se
    half = t_quantile(ALPHA, df) * se
    return Welch(diff, diff - half, diff + half, t, df, t_two_sided_p(t, df))


# --- one case -------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """One matched case. `change_pct` is of the headline figure (after vs before, + is a
    bigger figure); `ci_low_pct`/`ci_high_pct` its 95% interval; `ratio` after/before."""

    key: str
    label: str
    unit: str
    bigger_is_better: bool
    before: float | None
    after: float | None
    ratio: float
    change_pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    t_stat: float | None
    df: float | None
    p_value: float | None
    significant: bool
    tested: bool             # False: a side had < 2 samples, the threshold alone decides
    verdict: str             # faster | slower | no change | n/a
    unstable: bool
    n_before: int
    n_after: int
    latency_before: dict[str, float] = field(default_factory=dict)
    latency_after: dict[str, float] = field(default_factory=dict)

    @property
    def regression(self) -> bool:
        return self.verdict == "slower"


def _figure_change(before: float, diff: float, bigger: bool) -> float:
    """Relative change of the figure when the mean time per operation moves by `diff`:
    a throughput goes as 1/time, a time as itself."""
    after = before + diff
    if not bigger:
        return diff / before
    return before / after - 1.0 if after > 0 else math.inf


def compare_measurements(a: Measurement, b: Measurement, threshold_pct: float) -> Comparison:
    before, after = a.value, b.value
    ratio = after / before if before and after else math.nan
    change = ratio - 1.0 if before and after else math.nan
    test = welch(a.samples, b.samples)
    low = high = None
    if test is not None:
        mean_a = statistics.fmean(a.samples)
        ends = sorted((_figure_change(mean_a, test.low, b.bigger_is_better),
                       _figure_change(mean_a, test.high, b.bigger_is_better)))
        low, high = ends[0] * 100, ends[1] * 100
    significant = test.significant if test is not None else False
    big_enough = not math.isnan(change) and abs(change) * 100 >= threshold_pct
    if math.isnan(change):
        verdict = "n/a"
    elif (significant or test is None) and big_enough:
        better = change > 0 if b.bigger_is_better else change < 0
        verdict = "faster" if better else "slower"
    else:
        verdict = "no change"
    return Comparison(
        key=b.key, label=b.name, unit=b.unit, bigger_is_better=b.bigger_is_better,
        before=before, after=after, ratio=ratio, change_pct=change * 100, ci_low_pct=low,
        ci_high_pct=high, t_stat=None if test is None else test.t,
        df=None if test is None else test.df, p_value=None if test is None else test.p,
        significant=significant, tested=test is not None, verdict=verdict,
        unstable=a.unstable or b.unstable, n_before=len(a.samples), n_after=len(b.samples),
        latency_before=dict(a.latency_us), latency_after=dict(b.latency_us))


# --- checks (k6-style thresholds) -------------------------------------------------------
LATENCY_KEYS = {"p50": "p50", "p90": "p90", "p99": "p99", "p999": "p999", "p99.9": "p999",
                "max": "max", "mean": "mean"}
FIGURE_NAMES = ("ops/s", "rows/s", "requests/s", "req/s", "passes/s", "value", "figure")
FIGURE_ALIASES = {"req/s": "requests/s"}
TIME_UNITS_US = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
_CHECK = re.compile(r"^\s*(?P<metric>[A-Za-z0-9/._]+)\s*(?P<op><=|>=|<|>)\s*"
                    r"(?P<num>[+-]?\d+(?:\.\d+)?)\s*(?P<unit>%|ns|us|µs|ms|s)?\s*$")


@dataclass(frozen=True)
class Check:
    """`p99<5ms`, `ops/s>-5%`: a condition every case must meet. A `%` bound is on
    the change against the baseline; otherwise it is on the new run's value."""

    text: str
    metric: str              # "figure" or a latency key (p50, p99, ...)
    op: str
    bound: float             # µs for latency, the figure's unit, or % when relative
    relative: bool
    unit: str | None = None  # the figure's unit as named (ops/s...); None: any figure

    def holds(self, value: float) -> bool:
        return {"<": value < self.bound, "<=": value <= self.bound,
                ">": value > self.bound, ">=": value >= self.bound}[self.op]


def parse_check(text: str) -> Check:
    m = _CHECK.match(text)
    if not m:
        raise UserError(f"cannot read --check {text!r}: expected METRIC<BOUND or "
                        "METRIC>BOUND, e.g. 'p99<5ms' or 'ops/s>-5%'")
    metric, unit, bound = m["metric"].lower(), m["unit"], float(m["num"])
    if metric in FIGURE_NAMES:
        if unit not in (None, "%"):
            raise UserError(f"--check {text!r}: {metric} takes a number or a %, not {unit}")
        named = FIGURE_ALIASES.get(metric, metric)
        return Check(text, "figure", m["op"], bound, unit == "%",
                     None if named in ("value", "figure") else named)
    if metric in LATENCY_KEYS:
        if unit is None:
            raise UserError(f"--check {text!r}: give the latency's unit (ns, us, ms, s) "
                            "or a % change")
        relative = unit == "%"
        return Check(text, LATENCY_KEYS[metric], m["op"],
                     bound if relative else bound * TIME_UNITS_US[unit], relative)
    raise UserError(f"--check {text!r}: unknown metric {metric!r} (known: "
                    f"{', '.join(FIGURE_NAMES)}, {', '.join(LATENCY_KEYS)})")


@dataclass(frozen=True)
class CheckResult:
    check: str
    case: str
    passed: bool
    detail: str


def evaluate(check: Check, c: Comparison) -> CheckResult:
    """Relative figure bounds count only a significant change (a change whose interval
    holds zero is noise, not a regression); latency percentiles come from one histogram
    per run, with no interval, so their bounds use the values as measured."""
    if check.metric == "figure":
        if check.relative:
            value = c.change_pct
            noise = c.tested and not c.significant
            passed = check.holds(value) or noise or math.isnan(value)
            detail = f"change {value:+.1f}%" + (" (not significant: noise)"
                                                 if noise and not check.holds(value) else "")
        else:
            value = c.after if c.after is not None else math.nan
            passed = check.holds(value)
            detail = f"{value:,.1f} {c.unit}"
        return CheckResult(check.text, c.label, passed, detail)
    after = c.latency_after.get(check.metric)
    if after is None:
        return CheckResult(check.text, c.label, True, f"no {check.metric} recorded: skipped")
    if check.relative:
        before = c.latency_before.get(check.metric)
        if not before:
            return CheckResult(check.text, c.label, True,
                               f"no baseline {check.metric}: skipped")
        value = (after / before - 1) * 100
        return CheckResult(check.text, c.label, check.holds(value),
                           f"{check.metric} {before:,.1f} -> {after:,.1f} µs ({value:+.1f}%)")
    return CheckResult(check.text, c.label, check.holds(after),
                       f"{check.metric} {after:,.1f} µs")


def _check_unit(check: Check, comparisons: list[Comparison], workload: str) -> None:
    """A check naming a figure the runs do not have is a mistake, not a pass judged
    against another figure."""
    if check.unit is None:
        return
    units = sorted({c.unit for c in comparisons})
    if any(u != check.unit for u in units):
        raise UserError(f"--check {check.text!r}: the {workload} runs' cases are measured in "
                        f"{', '.join(units)}, not {check.unit} (name that figure, or 'value')")


# --- two runs ---------------------------------------------------------------------------
def environment_identity(env: dict[str, Any]) -> dict[str, Any]:
    """What must agree for absolute figures to compare: CPU, machine, Python."""
    os_text = str(env.get("os") or "")
    arch = next((a for a in ARCHES if a in os_text), os_text or None)
    return {"cpu_model": env.get("cpu_model"), "cpu_logical": env.get("cpu_logical"),
            "machine": env.get("machine") or arch, "python": env.get("python")}


def environment_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    ia, ib = environment_identity(a), environment_identity(b)
    return [f"{k}: {ia[k]!r} vs {ib[k]!r}" for k in ENV_FIELDS
            if ia[k] is not None and ib[k] is not None and ia[k] != ib[k]]


def workload_of(report: Report) -> str:
    return str(report.header.get("workload") or "?")


@dataclass
class RunComparison:
    """Everything the gate and the outputs need about one `after` run."""

    comparisons: list[Comparison]
    only_before: list[str]          # ok in the baseline, absent from the new run
    only_after: list[str]
    failed_after: list[str]         # failed in the new run (errors)
    failed_before: list[str]
    environment_differs: list[str]
    checks: list[CheckResult] = field(default_factory=list)

    def gate_failures(self, fail_on_regression: bool) -> list[str]:
        """Why the gate fails (empty: it passes)."""
        out = [f"FAILED in the new run: {label}" for label in self.failed_after]
        out += [f"MISSING from the new run: {label}" for label in self.only_before]
        if fail_on_regression:
            out += [f"REGRESSION: {c.label} {c.change_pct:+.1f}% {c.unit}"
                    for c in self.comparisons if c.regression]
        out += [f"CHECK {r.check} failed: {r.case}: {r.detail}" for r in self.checks
                if not r.passed]
        return out


def compare_reports(before: Report, after: Report, threshold_pct: float = 5.0,
                    checks: list[Check] | None = None, force: bool = False) -> RunComparison:
    """Match the two runs' measurements and judge each change.

    Refuses runs of different workloads (nothing can match) and, unless `force`,
    runs from different environments (their absolute figures do not compare)."""
    wa, wb = workload_of(before), workload_of(after)
    if wa != wb:
        raise UserError(f"the workloads differ: the baseline is a {wa} run and the other "
                        f"a {wb} run, so no case can match (compare runs of one workload)")
    differs = environment_differences(before.environment, after.environment)
    if differs and not force:
        raise UserError("the runs come from different environments (" + "; ".join(differs)
                        + "): absolute figures do not carry across machines or "
                        "interpreters. Pass --force to compare them anyway.")
    old = {m.key: m for m in before.measurements}
    new = {m.key: m for m in after.measurements}
    out = RunComparison([], [], [], [], [], differs)
    for key, b in new.items():
        a = old.get(key)
        if b.failed:
            out.failed_after.append(b.name + (f" ({b.error})" if b.error else ""))
            continue
        if a is None:
            out.only_after.append(b.name)
            continue
        if a.failed:
            out.failed_before.append(a.name)
            continue
        out.comparisons.append(compare_measurements(a, b, threshold_pct))
    out.only_before = [m.name for k, m in old.items() if k not in new and not m.failed]
    for check in checks or []:
        _check_unit(check, out.comparisons, wb)
        out.checks += [evaluate(check, c) for c in out.comparisons]
    return out
