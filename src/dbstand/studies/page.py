"""A study as a Markdown page (docs/studies/NAME.md): what ran, where, and the report."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from dbstand.report.model import Report

if TYPE_CHECKING:
    from dbstand.results.store import ResultsFile
    from dbstand.studies.base import Study


def _environment_lines(env: dict[str, Any], records: list[dict[str, Any]]) -> list[str]:
    if not env:
        return []
    servers = []
    for r in records:
        server = (r.get("environment") or {}).get("server") or {}
        name = str(server.get("version") or server.get("server") or
                   server.get("app_server") or "")
        kind = str(r.get("target_kind") or "")
        if server.get("version") and kind and not name.lower().startswith(kind[:5]):
            name = f"{kind} {name}"
        if name and name not in servers:
            servers.append(name)
    lines = [f"- CPU: {env.get('cpu_model', '?')}, {env.get('cpu_logical', '?')} logical "
             f"CPU(s); memory {env.get('memory_gib', '?')} GiB",
             f"- OS: {env.get('os', '?')}; {env.get('python', '?')}",
             _load_line(env, records)]
    if servers:
        lines.append(f"- servers: {', '.join(servers[:6])}")
    return lines


def _load_line(env: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """The machine's load over the whole run, not one reading: every case records the
    1-minute load average when it ends, so their mean and maximum span the run."""
    readings = [float(load) for r in records
                if (load := (r.get("environment") or {}).get("load_avg_1m")) is not None]
    if not readings:
        return f"- load average (1 min): {env.get('load_avg_1m', '?')} (one reading)"
    return (f"- load average (1 min) over the run: mean {sum(readings) / len(readings):.2f}, "
            f"max {max(readings):.2f} ({len(readings)} readings, one at the end of each case)")


def _wall_time_s(header: dict[str, Any], records: list[dict[str, Any]]) -> float | None:
    """From the run's start to its last case's end, for a page made from --results."""
    ends = [str(r["finished_at"]) for r in records if r.get("finished_at")]
    if not ends or not header.get("started_at"):
        return None
    try:
        start = datetime.fromisoformat(str(header["started_at"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(max(ends).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (end - start).total_seconds()


def markdown_page(study: Study, report: Report, run: ResultsFile, quick: bool, name: str,
                  elapsed_s: float | None) -> str:
    """The generated page: a preface (command, date, machine), then the report."""
    from dbstand.report.renderers import renderer

    header = run.header or {}
    if elapsed_s is None:
        elapsed_s = _wall_time_s(header, run.cases)
    command = f"dbstand study {name}{' --quick' if quick else ''} --markdown " \
              f"docs/studies/{name}{'-study' if name == 'parking' else ''}.md"
    lines = [f"# Study {name}: {study.title} (seed {study.seed})", "",
             "This page is generated: do not edit it by hand. It was written by", "",
             f"    {command}", "",
             f"from the run {header.get('run_id', '?')} started at "
             f"{header.get('started_at', '?')}"
             + (f" (wall time {elapsed_s:,.0f} s)." if elapsed_s is not None else "."),
             "", "## Where it ran", "",
             *_environment_lines(report.environment, run.cases), ""]
    if quick:
        lines += ["The quick variant ran: smaller sizes and fewer cases than the seed, so "
                  "that it finishes in minutes on a 2-core machine. Its verdicts are about "
                  "ratios within this run; absolute figures belong to this machine alone.",
                  ""]
    body = renderer("markdown")(report)
    return "\n".join(lines) + "\n" + body
