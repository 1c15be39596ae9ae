"""Markdown: every table with all its columns, for issues, PRs and CI summaries."""

from __future__ import annotations

from dbstand.report.model import Report, Table


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table_lines(table: Table) -> list[str]:
    out = [f"#### {table.title}", ""] if table.title else []
    out.append("| " + " | ".join(_cell(c.title) for c in table.columns) + " |")
    out.append("|" + "|".join("---:" if c.numeric else "---" for c in table.columns) + "|")
    for row in table.rows:
        out.append("| " + " | ".join(_cell(row.get(c.key, "")) for c in table.columns) + " |")
    if table.caption:
        out += ["", table.caption]
    return [*out, ""]


def render(report: Report) -> str:
    out = [f"### {report.title}", ""]
    for section in report.sections:
        if not any(isinstance(b, Table | str) for b in section.blocks):
            continue  # charts only: Markdown has no charts
        if section.title:
            out += [f"#### {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                out += table_lines(block)
            elif isinstance(block, str):
                out += [block, ""]
    out += [f"- {line}" for line in report.notes]
    if report.caption:
        out += ["", report.caption]
    if not report.complete:
        out += ["", f"Run status: {report.status}."]
    return "\n".join(out).rstrip() + "\n"
