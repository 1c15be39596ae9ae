"""A self-contained HTML report: tables and SVG charts, no scripts, no network.

Every chart names its unit and direction and links to the table with the same
figures; wide tables scroll inside their own box; the environment closes the page.
"""

from __future__ import annotations

import html
import math
from typing import Any

from dbstand.report.model import Bar, BarChart, DotChart, Report, Table

SHARED_SPREAD = 8.0    # groups further apart than this get an axis each
BASE_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;
color:#222}
.scroll{overflow-x:auto;width:fit-content;max-width:100%;margin:.5em 0}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 6px;white-space:nowrap}
th{background:#f4f4f4}
.scroll tr>:first-child{position:sticky;left:0;background:#fff;box-shadow:1px 0 0 #ccc}
.scroll tr:first-child>:first-child{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.unstable>td,.scroll tr.unstable>:first-child{background:#fff6d5}
tr.failed>td,.scroll tr.failed>:first-child{background:#fde2e2}
tr.limit>td,.scroll tr.limit>:first-child{background:#e3f2f7}
.meta{color:#555;font-size:13px} svg{margin:.5em 0;max-width:100%;height:auto}
svg text{fill:#222} h2{margin-top:1.6em} a{color:#2a5d9f} :target{scroll-margin-top:1em}
.env{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
.env h3{margin:.2em 0;font-size:15px} .env th{text-align:left;font-weight:600}
.env>div{min-width:0;max-width:100%} .env td{white-space:normal;overflow-wrap:anywhere;
max-width:60em}
"""
FONT = 13             # chart text, px: legible at the page's own scale
CHAR_W = 7.2          # rough width of one character at FONT, for label columns


def palette(n: int) -> list[str]:
    """n distinct colours: the base ten, then evenly spaced hues (never a repeat)."""
    if n <= len(BASE_PALETTE):
        return list(BASE_PALETTE[:n])
    return [f"hsl({round(360 * i / n)},62%,{45 + 10 * (i % 2)}%)" for i in range(n)]


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _table(table: Table, chart_anchor: str = "") -> str:
    head = "".join(f"<th>{_esc(c.title)}</th>" for c in table.columns)
    body = []
    for i, row in enumerate(table.rows):
        cells = "".join(f'<td class="{"n" if c.numeric else ""}">{_esc(row.get(c.key, ""))}'
                        "</td>" for c in table.columns)
        body.append(f'<tr class="{table.style(i) or ""}">{cells}</tr>')
    anchor = f' id="{_esc(table.anchor)}"' if table.anchor else ""
    back = f' <a class="meta" href="#{_esc(chart_anchor)}">(chart)</a>' if chart_anchor else ""
    title = f"<h3>{_esc(table.title)}{back}</h3>" if table.title else \
        (f'<p class="meta">{back}</p>' if back else "")
    caption = f'<p class="meta">{_esc(table.caption)}</p>' if table.caption else ""
    # the id sits on the box itself: a table without a title is still a link target
    return (f'{title}<div class="scroll"{anchor}><table><tr>{head}</tr>{"".join(body)}'
            f"</table></div>{caption}")


def _link(anchor: str) -> str:
    return f' <a href="#{_esc(anchor)}">(table)</a>' if anchor else ""


def nice_step(top: float, ticks: int = 5) -> float:
    """A 1-2-2.5-5 x 10^k step giving about `ticks` intervals up to `top`."""
    if top <= 0:
        return 1.0
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def round_up(value: float) -> float:
    """The axis end: the first nice step at or above `value`."""
    step = nice_step(value)
    return step * max(1, math.ceil(value / step - 1e-9))


def tick_label(value: float) -> str:
    """Axis numbers short enough not to collide: 250k, 1.5M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def bar_label(value: float) -> str:
    """Three significant digits at least: 5.90 passes/s is not "6"."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def _text(x: float, y: float, text: str, size: int = FONT, anchor: str = "start",
          weight: str = "") -> str:
    bold = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{bold}>'
            f"{_esc(text)}</text>")


def _axis(x0: float, width: float, top: float, y_top: float, y_axis: float) -> list[str]:
    """Grid lines and tick labels of a value axis from 0 to `top`."""
    step = nice_step(top)
    out = []
    k = 0
    while k * step <= top * 1.0001:
        x = x0 + k * step / top * width
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y_top}" y2="{y_axis}" '
                   f'stroke="{"#999" if k == 0 else "#e4e4e4"}"/>')
        out.append(_text(x, y_axis + 14, tick_label(k * step), FONT - 1, "middle"))
        k += 1
    return out


def bar_chart(chart: BarChart) -> str:
    """Grouped bars. When groups differ by more than SHARED_SPREAD times (a select at
    70k ops/s beside an fsync-bound insert at 400), each group gets its own axis, said
    so under the chart: on one axis the small groups would be invisible."""
    bars = [b for _, group in chart.groups for b in group]
    if not bars:
        return "<p>Nothing to chart.</p>"
    series = list(dict.fromkeys(b.series for b in bars))
    colors = dict(zip(series, palette(len(series)), strict=True))

    def group_top(group: list[Bar]) -> float:
        return max(max(b.value, b.high or 0) for b in group) or 1.0

    tops = [group_top(g) for _, g in chart.groups if g]
    own_axes = len(tops) > 1 and max(tops) / max(min(tops), 1e-12) > SHARED_SPREAD
    shared = max(tops)
    # group labels are bold: about 12% wider than CHAR_W
    label_w = min(280, max(90, CHAR_W * 1.12 * max(len(label) for label, _ in chart.groups)
                           + 18))
    width, bar_h, gap = 600, 18, 14
    value_room = 150                          # for "73,721 (UNSTABLE)" right of a bar
    parts: list[str] = []
    y = 10
    for label, group in chart.groups:
        if not group:
            continue
        top = round_up(group_top(group) if own_axes else shared)
        y0, first = y, len(parts)
        parts.append(_text(0, y + bar_h * len(group) / 2 + 5, label, FONT, weight="600"))
        for b in group:
            w = max(0.0, b.value / top * width)
            cy = y + (bar_h - 2) / 2
            flag = f" ({b.flag})" if b.flag else ""
            parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 3}" '
                         f'fill="{colors[b.series]}"><title>{_esc(b.series)} {_esc(label)}: '
                         f"{b.value:,.1f}{_esc(flag)}</title></rect>")
            right = w
            if b.low is not None and b.high is not None:
                lo, hi = max(0.0, b.low) / top * width, b.high / top * width
                right = max(w, hi)
                parts.append(f'<path d="M{label_w + lo:.1f} {cy - 4:.1f}v8M{label_w + lo:.1f} '
                             f'{cy:.1f}H{label_w + hi:.1f}M{label_w + hi:.1f} {cy - 4:.1f}v8" '
                             'stroke="#111" stroke-width="1.3" fill="none"/>')
            parts.append(_text(label_w + right + 5, y + bar_h - 5,
                               f"{bar_label(b.value)}{flag}", FONT - 1))
            y += bar_h
        if own_axes:
            parts[first:first] = _axis(label_w, width, top, y0 - 4, y + 2)  # under the bars
            y += 22
        y += gap
    if not own_axes:
        parts[:0] = _axis(label_w, width, round_up(shared), 4, y - gap + 2)
        y += 22 - gap
    unit = chart.unit + (" — each group on its own scale" if own_axes else "")
    parts.append(_text(label_w + width / 2, y + 16, unit, FONT, "middle", "600"))
    legend, lx, ly = [], label_w, y + 36
    for name in series:
        item_w = 26 + CHAR_W * len(name)
        if lx + item_w > label_w + width + value_room and lx > label_w:
            lx, ly = label_w, ly + 20
        legend.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" '
                      f'fill="{colors[name]}"/>' + _text(lx + 16, ly, name, FONT - 1))
        lx += item_w
    total_w = label_w + width + value_room
    height = ly + 12
    anchor = f' id="{_esc(chart.anchor)}"' if chart.anchor else ""
    note = chart.note or "Bars: mean; whiskers: 95% confidence interval of the mean."
    if own_axes:
        note += (" Groups differ by more than "
                 f"{SHARED_SPREAD:g}x, so each has its own axis: compare bars within a group.")
    return (f"<h3{anchor}>{_esc(chart.title)}{_link(chart.table_anchor)}</h3>"
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w:.0f} {height:.0f}" '
            f'width="{total_w:.0f}" role="img" aria-label="{_esc(chart.title)}">'
            + "".join(parts) + "".join(legend) + f'</svg><p class="meta">{_esc(note)}</p>')


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Decades; with 1-2-5 between them when the axis spans under three decades."""
    marks = (1, 2, 5) if hi - lo < 3 else (1,)
    return [m * 10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) for m in marks
            if lo <= math.log10(m * 10.0 ** e) <= hi]


def dot_chart(chart: DotChart) -> str:
    values = [v for _, row in chart.rows for v in row.values() if v and v > 0]
    if not values:
        return "<p>No latency recorded.</p>"
    lo, hi = math.log10(min(values)) - 0.08, math.log10(max(values)) + 0.08
    if hi - lo < 1:                       # keep at least one decade in view
        mid = (hi + lo) / 2
        lo, hi = mid - 0.5, mid + 0.5
    label_w = min(360, max(120, CHAR_W * max(len(label) for label, _ in chart.rows) + 14))
    width, row_h = 560, 20
    colors = dict(zip(chart.keys, palette(len(chart.keys)), strict=True))
    legend, lx = [], label_w
    for key in chart.keys:
        legend.append(f'<circle cx="{lx + 6}" cy="14" r="5.5" fill="{colors[key]}"/>'
                      + _text(lx + 15, 19, key, FONT))
        lx += 30 + CHAR_W * len(key)
    stripes, parts, y = [], [], 34
    for i, (label, row) in enumerate(chart.rows):
        if i % 2:
            stripes.append(f'<rect x="0" y="{y}" width="{label_w + width}" height="{row_h}" '
                           'fill="#f6f6f6"/>')
        parts.append(_text(0, y + row_h / 2 + 5, label, FONT))
        for key in chart.keys:
            v = row.get(key)
            if v and v > 0:
                x = label_w + (math.log10(v) - lo) / (hi - lo) * width
                parts.append(f'<circle cx="{x:.1f}" cy="{y + row_h / 2}" r="5" '
                             f'fill="{colors[key]}" stroke="#fff" stroke-width="0.8">'
                             f"<title>{_esc(label)} {key}: {v:,.1f}</title></circle>")
        y += row_h
    ticks = []
    for value in _log_ticks(lo, hi):
        x = label_w + (math.log10(value) - lo) / (hi - lo) * width
        ticks.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="28" y2="{y + 2}" stroke="#ddd"/>'
                     + _text(x, y + 16, tick_label(value), FONT - 1, "middle"))
    axis = _text(label_w + width / 2, y + 36, chart.unit, FONT, "middle", "600")
    anchor = f' id="{_esc(chart.anchor)}"' if chart.anchor else ""
    total_w = label_w + width + 30
    return (f"<h3{anchor}>{_esc(chart.title)}{_link(chart.table_anchor)}</h3>"
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w:.0f} {y + 46}" '
            f'width="{total_w:.0f}" role="img" aria-label="{_esc(chart.title)}">'
            + "".join(stripes) + "".join(ticks) + "".join(parts) + "".join(legend) + axis
            + f'</svg><p class="meta">{_esc(chart.note)}</p>')


#: readable names of the recorded environment's fields (others show as recorded)
ENV_NAMES = {"cpu_model": "CPU model", "cpu_logical": "logical CPUs",
             "cpu_physical": "physical cores", "cpu_mhz": "CPU MHz", "memory_gib": "memory GiB",
             "os": "OS", "kernel": "kernel", "python": "Python", "python_build": "Python build",
             "dbstand": "dbstand", "load_avg_1m": "load average (1 min)",
             "executable": "interpreter"}


def _value(v: Any) -> str:
    """A recorded value as a cell: nested settings flattened, nothing shown as "–"."""
    if isinstance(v, dict):
        return "; ".join(f"{k} {_value(x)}" for k, x in v.items()) or "–"
    if isinstance(v, list | tuple):
        return ", ".join(_value(x) for x in v) or "–"
    return "–" if v is None or v == "" else str(v)


def _kv_table(title: str, items: list[tuple[str, Any]]) -> str:
    if not items:
        return ""
    rows = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(_value(v))}</td></tr>" for k, v in items)
    return f'<div><h3>{_esc(title)}</h3><div class="scroll"><table>{rows}</table></div></div>'


def _environment(env: dict[str, Any]) -> str:
    """Machine and interpreter, the server measured, stack packages: side by side."""
    machine = [(ENV_NAMES.get(k, k), v) for k, v in env.items()
               if k not in ("server", "packages")]
    server = list((env.get("server") or {}).items())
    packages = list((env.get("packages") or {}).items())
    body = (_kv_table("Machine and interpreter", machine)
            + _kv_table("Server measured (first case)", server)
            + _kv_table("Stack packages", packages))
    return (f'<h2 id="environment">Environment</h2><div class="env">'
            f'{body or "<p>Not recorded.</p>"}</div>')


def render(report: Report) -> str:
    header = report.header
    charts: dict[str, str] = {}        # table -> the first chart drawing its figures
    for s in report.sections:
        for b in s.blocks:
            if isinstance(b, BarChart | DotChart) and b.table_anchor and b.anchor:
                charts.setdefault(b.table_anchor, b.anchor)
    parts = []
    for section in report.sections:
        parts.append(f"<h2>{_esc(section.title)}</h2>" if section.title else "")
        for block in section.blocks:
            if isinstance(block, Table):
                parts.append(_table(block, charts.get(block.anchor, "")))
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
