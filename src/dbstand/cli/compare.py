"""`dbstand compare BASE NEW [NEW...]`: what changed between runs, is it real, and
(for CI) should the build fail."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from dbstand.console import console, err_console
from dbstand.errors import UserError
from dbstand.report.compare import Comparison, RunComparison, compare_reports, parse_check
from dbstand.results.store import ResultsFile, read_results
from dbstand.workloads.render import build_report

FORMATS = ("table", "json", "markdown")
CAPTION = ("change: of each case's headline figure, new vs baseline, with its 95% interval "
           "[low, high]; p: Welch's two-sided t-test on the per-operation times of the "
           "counted iterations (significant below 0.05). slower/faster: significant and "
           "at least --threshold; no change: within the noise or below the threshold.")


def _pct(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.1f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.3g}"


def _interval(c: Comparison) -> str:
    if c.ci_low_pct is None or c.ci_high_pct is None:
        return "n/a (1 sample)" if not c.tested else "-"
    return f"[{c.ci_low_pct:+.1f}%, {c.ci_high_pct:+.1f}%]"


def _p(c: Comparison) -> str:
    return "-" if c.p_value is None else f"{c.p_value:.3g}"


def _verdict(c: Comparison) -> str:
    text = c.verdict
    if not c.tested and c.verdict != "n/a":
        text += " (untested)"
    return text + (" (unstable)" if c.unstable else "")


def _rows(c: Comparison) -> list[str]:
    return [c.label, f"{_num(c.before)} {c.unit}", f"{_num(c.after)} {c.unit}",
            _pct(c.change_pct), _interval(c), _p(c), _verdict(c)]


HEAD = ("case", "baseline", "new", "change", "95% CI", "p", "verdict")


def _notes(result: RunComparison, base: Path, new: Path) -> list[str]:
    out = [f"environments differ (compared with --force): {d}"
           for d in result.environment_differs]
    out += [f"FAILED in {new}: {label}" for label in result.failed_after]
    out += [f"missing from {new} (present in {base}): {label}" for label in result.only_before]
    out += [f"only in {new}: {label}" for label in result.only_after]
    out += [f"failed in the baseline {base}, not compared: {label}"
            for label in result.failed_before]
    out += [f"check {r.check}: {'ok' if r.passed else 'FAILED'} {r.case}: {r.detail}"
            for r in result.checks if not r.passed]
    passed = sum(1 for r in result.checks if r.passed)
    if result.checks:
        out.append(f"checks: {passed} of {len(result.checks)} passed")
    if not result.comparisons:
        out.append("no case appears in both files")
    return out


def _print_table(result: RunComparison, base: Path, new: Path) -> None:
    table = Table(title=escape(f"{new} vs {base}"), box=box.SIMPLE_HEAD,
                  caption=escape(CAPTION))
    for i, col in enumerate(HEAD):
        table.add_column(col, justify="left" if i in (0, 6) else "right")
    for c in result.comparisons:
        style = {"slower": "red", "faster": "green"}.get(c.verdict)
        table.add_row(*(escape(x) for x in _rows(c)), style=style)
    console.print(table)
    for line in _notes(result, base, new):
        console.print(escape(line), highlight=False)


def _markdown(result: RunComparison, base: Path, new: Path) -> str:
    def cell(x: str) -> str:
        return x.replace("|", "\\|")

    out = [f"#### `{new}` vs `{base}`", "", "| " + " | ".join(HEAD) + " |",
           "|---|" + "---:|" * 5 + "---|"]
    for c in result.comparisons:
        cells = [cell(x) for x in _rows(c)]
        if c.verdict == "slower":
            cells[-1] = f"**{cells[-1]}**"
        out.append("| " + " | ".join(cells) + " |")
    out += ["", *(f"- {cell(line)}" for line in _notes(result, base, new)), "",
            f"<sub>{CAPTION}</sub>", ""]
    return "\n".join(out)


def _json(result: RunComparison, new: Path, gate: list[str]) -> dict[str, Any]:
    def clean(x: Any) -> Any:
        return None if isinstance(x, float) and (math.isnan(x) or math.isinf(x)) else x

    return {"after": str(new),
            "comparisons": [{k: clean(v) for k, v in dataclasses.asdict(c).items()}
                            for c in result.comparisons],
            "only_before": result.only_before, "only_after": result.only_after,
            "failed_after": result.failed_after, "failed_before": result.failed_before,
            "environment_differs": result.environment_differs,
            "checks": [dataclasses.asdict(r) for r in result.checks],
            "gate_failures": gate}


def _read(path: Path) -> ResultsFile:
    """A results file; its warnings (a torn last line) on stderr, as `report` shows."""
    results = read_results(path)
    for warning in results.warnings:
        err_console.print(f"warning: {escape(str(path))}: {escape(warning)}", highlight=False)
    return results


def compare_runs(
    before: Annotated[Path, typer.Argument(help="The baseline results file")],
    after: Annotated[list[Path], typer.Argument(help="Results file(s) to judge against it")],
    threshold: Annotated[float, typer.Option(
        help="Smallest change, in %, called faster/slower")] = 5.0,
    format: Annotated[str, typer.Option("--format", "-f",
                                        help="table, json or markdown")] = "table",
    fail_on_regression: Annotated[bool, typer.Option(
        help="Exit 1 if a case is significantly slower by --threshold or more (for CI)")]
        = False,
    check: Annotated[list[str] | None, typer.Option(
        "--check", metavar="COND",
        help="k6-style condition every case must meet, repeatable: 'p99<5ms', "
             "'ops/s>-5%' (a % is a change against the baseline; a change within the "
             "noise passes). Exit 1 when one fails")] = None,
    force: Annotated[bool, typer.Option(
        help="Compare runs from different environments (CPU, machine, Python)")] = False,
) -> None:
    """Compare runs case by case: change, 95% interval, Welch's t-test; with
    --fail-on-regression or --check, exit 1 on a regression, a failed check, or a
    case that failed or is missing in a new run."""
    if format not in FORMATS:
        raise UserError(f"unknown format {format!r} (known: {', '.join(FORMATS)})")
    if not math.isfinite(threshold) or threshold < 0:
        raise UserError(f"--threshold must be a finite number of % from 0 (got {threshold:g})")
    checks = [parse_check(text) for text in check or []]
    base_report = build_report(_read(before))
    gated = fail_on_regression or bool(checks)
    failures: list[str] = []
    payloads, texts = [], []
    for new in after:
        result = compare_reports(base_report, build_report(_read(new)), threshold,
                                 checks, force)
        gate = result.gate_failures(fail_on_regression)
        failures += gate
        if format == "json":
            payloads.append(_json(result, new, gate if gated else []))
        elif format == "markdown":
            texts.append(_markdown(result, before, new))
        else:
            _print_table(result, before, new)
    if format == "json":
        typer.echo(json.dumps(payloads[0] if len(payloads) == 1 else {"runs": payloads},
                              indent=2, default=str))
    elif format == "markdown":
        typer.echo("\n".join(texts), nl=False)
    if gated and failures:
        out = err_console if format != "table" else console
        for line in failures:
            out.print(f"[red]gate:[/] {escape(line)}", highlight=False)
        raise typer.Exit(1)
