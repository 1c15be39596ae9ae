"""A self-contained HTML report: tables and SVG charts, no scripts, no network.

Every chart names its unit and direction and links to the table with the same
figures; wide tables scroll inside their own box; the environment closes the page.
"""

from __future__ import annotations

import html
import math
from typing import Any

from dbstand.report.model import BarChart, DotChart, Report, Table

BASE_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;
color:#222}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 6px;white-space:nowrap}
th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.unstable{background:#fff6d5} tr.failed{background:#fde2e2} tr.limit{background:#e3f2f7}
.meta{color:#555;font-size:13px} svg{margin:.5em 0;max-width:100%;height:auto}
h2{margin-top:1.6em} a{color:#2a5d9f}
"""


def palette(n: int) -> list[str]:
    """n distinct colours: the base ten, then evenly spaced hues (never a repeat)."""
    if n <= len(BASE_PALETTE):
        return list(BASE_PALETTE[:n])
    return [f"hsl({round(360 * i / n)},62%,{45 + 10 * (i % 2)}%)" for i in range(n)]


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _table(table: Table) -> str:
    head = "".join(f"<th>{_esc(c.title)}</th>" for c in table.columns)
    body = []
    for i, row in enumerate(table.rows):
        cells = "".join(f'<td class="{"n" if c.numeric else ""}">{_esc(row.get(c.key, ""))}'
                        "</td>" for c in table.columns)
        body.append(f'<tr class="{table.style(i) or ""}">{cells}</tr>')
    anchor = f' id="{_esc(table.anchor)}"' if table.anchor else ""
    title = f"<h3{anchor}>{_esc(table.title)}</h3>" if table.title else ""
    caption = f'<p class="meta">{_esc(table.caption)}</p>' if table.caption else ""
    return (f'{title}<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'
            f"{caption}")


def _link(anchor: str) -> str:
    return f' <a href="#{_esc(anchor)}">(table)</a>' if anchor else ""


def bar_chart(chart: BarChart) -> str:
    bars = [b for _, group in chart.groups for b in group]
    if not bars:
        return "<p>Nothing to chart.</p>"
    series = list(dict.fromkeys(b.series for b in bars))
    colors = dict(zip(series, palette(len(series)), strict=True))
    top = max(max(b.value, b.high or 0) for b in bars) * 1.1 or 1.0
    label_w, width, bar_h, gap = 150, 560, 16, 10
    parts, y = [], 24
    for label, group in chart.groups:
        parts.append(f'<text x="0" y="{y + bar_h * len(group) / 2 + 4:.0f}" font-size="12">'
                     f"{_esc(label)}</text>")
        for b in group:
            w = b.value / top * width
            cy = y + bar_h / 2
            flag = f" ({b.flag})" if b.flag else ""
            parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                         f'fill="{colors[b.series]}"><title>{_esc(b.series)} {_esc(label)}: '
                         f"{b.value:,.1f}{_esc(flag)}</title></rect>")
            right = w
            if b.low is not None and b.high is not None:
                lo, hi = b.low / top * width, b.high / top * width
                right = max(w, hi)
                parts.append(f'<line x1="{label_w + lo:.1f}" x2="{label_w + hi:.1f}" '
                             f'y1="{cy}" y2="{cy}" stroke="#000" stroke-width="1.5"/>')
            parts.append(f'<text x="{label_w + right + 5:.1f}" y="{y + bar_h - 4}" '
                         f'font-size="11">{b.value:,.0f}{_esc(flag)}</text>')
            y += bar_h
        y += gap
    # value axis with ticks, so the unit can be read off the chart itself
    step = 10 ** math.floor(math.log10(top)) if top > 0 else 1
    ticks = []
    for k in range(int(top // step) + 1):
        x = label_w + k * step / top * width
        ticks.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="18" y2="{y}" stroke="#eee"/>'
                     f'<text x="{x:.1f}" y="{y + 14}" font-size="11" text-anchor="middle">'
                     f"{k * step:,.0f}</text>")
    axis = (f'<text x="{label_w + width / 2:.0f}" y="{y + 30}" font-size="12" '
            f'text-anchor="middle">{_esc(chart.unit)}</text>')
    legend, lx, ly = [], label_w, y + 44
    for s in series:
        item_w = 24 + 7 * len(s)
        if lx + item_w > label_w + width + 120 and lx > label_w:
            lx, ly = label_w, ly + 16
        legend.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colors[s]}"/>'
                      f'<text x="{lx + 14}" y="{ly + 9}" font-size="11">{_esc(s)}</text>')
        lx += item_w
    height = ly + 24
    anchor = f' id="{_esc(chart.anchor)}"' if chart.anchor else ""
    note = chart.note or ("Bars: mean; black line: 95% confidence interval of the mean.")
    return (f"<h3{anchor}>{_esc(chart.title)}{_link(chart.table_anchor)}</h3>"
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {label_w + width + 140} '
            f'{height}" width="{label_w + width + 140}" role="img" '
            f'aria-label="{_esc(chart.title)}">' + "".join(ticks) + "".join(parts) + axis
            + "".join(legend) + f'</svg><p class="meta">{_esc(note)}</p>')


def dot_chart(chart: DotChart) -> str:
    values = [v for _, row in chart.rows for v in row.values() if v and v > 0]
    if not values:
        return "<p>No latency recorded.</p>"
    lo, hi = math.log10(min(values)) - 0.05, math.log10(max(values)) + 0.1
    label_w, width, row_h = 280, 520, 16
    colors = dict(zip(chart.keys, palette(len(chart.keys)), strict=True))
    parts, y = [], 34
    for label, row in chart.rows:
        parts.append(f'<text x="0" y="{y + 10}" font-size="12">{_esc(label)}</text>')
        for key in chart.keys:
            v = row.get(key)
            if v and v > 0:
                x = label_w + (math.log10(v) - lo) / (hi - lo) * width
                parts.append(f'<circle cx="{x:.1f}" cy="{y + 6}" r="4.5" fill="{colors[key]}">'
                             f"<title>{_esc(label)} {key}: {v:,.1f}</title></circle>")
        y += row_h
    ticks = []
    for exp in range(math.floor(lo), math.ceil(hi) + 1):
        x = label_w + (exp - lo) / (hi - lo) * width
        if label_w <= x <= label_w + width:
            ticks.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="26" y2="{y}" stroke="#ddd"/>'
                         f'<text x="{x:.1f}" y="{y + 14}" font-size="12" '
                         f'text-anchor="middle">{10 ** exp:g}</text>')
    legend = "".join(f'<circle cx="{label_w + i * 80}" cy="12" r="5" fill="{colors[k]}"/>'
                     f'<text x="{label_w + i * 80 + 9}" y="16" font-size="12">{_esc(k)}</text>'
                     for i, k in enumerate(chart.keys))
    axis = (f'<text x="{label_w + width / 2:.0f}" y="{y + 32}" font-size="12" '
            f'text-anchor="middle">{_esc(chart.unit)}</text>')
    anchor = f' id="{_esc(chart.anchor)}"' if chart.anchor else ""
    return (f"<h3{anchor}>{_esc(chart.title)}{_link(chart.table_anchor)}</h3>"
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {label_w + width + 40} '
            f'{y + 44}" width="{label_w + width + 40}" role="img" '
            f'aria-label="{_esc(chart.title)}">' + "".join(ticks) + legend + "".join(parts)
            + axis + f'</svg><p class="meta">{_esc(chart.note)}</p>')


def _environment(env: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>"
                   for k, v in env.items() if k not in ("server", "packages"))
    rows += "".join(f"<tr><th>server {_esc(k)}</th><td>{_esc(v)}</td></tr>"
                    for k, v in (env.get("server") or {}).items())
    rows += "".join(f"<tr><th>package {_esc(k)}</th><td>{_esc(v)}</td></tr>"
                    for k, v in (env.get("packages") or {}).items())
    return f'<h2 id="environment">Environment</h2><div class="scroll"><table>{rows}</table></div>'


def render(report: Report) -> str:
    header = report.header
    parts = []
    for section in report.sections:
        parts.append(f"<h2>{_esc(section.title)}</h2>" if section.title else "")
        for block in section.blocks:
            if isinstance(block, Table):
                parts.append(_table(block))
            elif isinstance(block, BarChart):
                parts.append(bar_chart(block))
            elif isinstance(block, DotChart):
                parts.append(dot_chart(block))
            else:
                parts.append(f"<p>{_esc(block)}</p>")
    notes = "".join(f"<li>{_esc(n)}</li>" for n in report.notes)
    warnings = "".join(f"<li>warning: {_esc(w)}</li>" for w in report.warnings)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(report.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style></head><body>
<h1>{_esc(report.title)}</h1>
<p class="meta">Started {_esc(header.get('started_at', '?'))}; status: {_esc(report.status)};
command: <code>{_esc(' '.join(header.get('argv', [])))}</code></p>
{''.join(parts)}
{f'<h2>Notes</h2><ul>{notes}{warnings}</ul>' if notes or warnings else ''}
<p class="meta">{_esc(report.caption)}</p>
{_environment(report.environment)}
<p class="meta">Compare figures within one run, as ratios; absolute numbers do not carry
across machines.</p>
</body></html>
"""
