"""A short Markdown summary for a CI page ($GITHUB_STEP_SUMMARY): the status, one
line per case with its headline figure, interval and latency, then the verdicts
(the report's sentences and flagged notes). The full tables stay in the Markdown
and HTML exports: a step summary is read at a glance.
"""

from __future__ import annotations

from dbstand.report.model import Measurement, Report

MAX_CASES = 40
MAX_NOTES = 12
FLAG_WORDS = ("FAILED", "UNSTABLE", "BIMODAL", "SUPERLINEAR", "LIMIT", "!")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _number(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.3g}"


def _flag(m: Measurement) -> str:
    if m.failed:
        return "**FAILED**" + (f": {_cell(m.error[:120])}" if m.error else "")
    return "UNSTABLE" if m.unstable else ""


def case_table(measurements: list[Measurement]) -> list[str]:
    units = {(m.unit, m.bigger_is_better) for m in measurements}
    one_unit = len(units) == 1
    unit, bigger = next(iter(units)) if one_unit else ("figure", True)
    arrow = "↑" if bigger else "↓"
    head = f"{unit} {arrow}" if one_unit else "figure (↑ higher, ↓ lower is better)"
    with_latency = any(m.latency_us for m in measurements)
    cols = ["case", head, "±95% CI"] + (["p50 µs ↓", "p99 µs ↓"] if with_latency else []) \
        + ["flag"]
    out = ["| " + " | ".join(cols) + " |",
           "|---|" + "---:|" * (len(cols) - 2) + "---|"]
    for m in measurements[:MAX_CASES]:
        value = _number(m.value)
        if not one_unit and m.value is not None:
            value += f" {m.unit} {'↑' if m.bigger_is_better else '↓'}"
        ci = f"±{m.ci95_pct:.1f}%" if m.ci95_pct is not None else "-"
        cells = [_cell(m.name), value, ci]
        if with_latency:
            cells += [_number(m.latency_us.get("p50")), _number(m.latency_us.get("p99"))]
        out.append("| " + " | ".join([*cells, _flag(m)]) + " |")
    if len(measurements) > MAX_CASES:
        out.append(f"\n… and {len(measurements) - MAX_CASES} more cases: see the full report.")
    return out


def render(report: Report) -> str:
    ms = report.measurements
    failed = sum(1 for m in ms if m.failed)
    unstable = sum(1 for m in ms if m.unstable and not m.failed)
    status = f"**{report.status}**: {len(ms)} case(s)"
    if failed:
        status += f", **{failed} failed**"
    if unstable:
        status += f", {unstable} unstable"
    out = [f"### {report.title}", "", status, ""]
    if ms:
        out += [*case_table(ms), ""]
    sentences = [b for s in report.sections for b in s.blocks if isinstance(b, str)]
    flagged = [n for n in report.notes if n.lstrip().startswith(FLAG_WORDS)]
    verdicts = [*sentences, *flagged, *(f"warning: {w}" for w in report.warnings)]
    if verdicts:
        out += ["**Verdicts**", ""]
        out += [f"- {_cell(v)}" for v in verdicts[:MAX_NOTES]]
        if len(verdicts) > MAX_NOTES:
            out.append(f"- … {len(verdicts) - MAX_NOTES} more in the full report")
        out.append("")
    env = report.environment
    if env:
        out.append(f"<sub>{_cell(str(env.get('cpu_model', '?')))} × "
                   f"{env.get('cpu_logical', '?')}, {_cell(str(env.get('python', '?')))}, "
                   f"dbstand {env.get('dbstand', '?')}. Compare within one machine, "
                   "as ratios.</sub>")
    return "\n".join(out).rstrip() + "\n"
