"""A self-contained HTML report: tables and SVG charts, no scripts, no network.

Every chart names its unit and direction and links to the table with the same
figures; wide tables scroll inside their own box; cases with a time series (the
records' `series`) get a small chart each (throughput and latency per interval,
warm-up shaded) linking to the case's row; the environment closes the page.
"""

from __future__ import annotations

import dataclasses
import html
import math
from typing import Any

from dbstand.report.model import (
    Bar,
    BarChart,
    DotChart,
    Link,
    Measurement,
    Report,
    SeriesPoint,
    StackedBarChart,
    Table,
    series_runs,
)

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
tr:target>td{background:#dbe9f6}
.series{display:grid;grid-template-columns:repeat(auto-fill,minmax(500px,1fr));gap:.5em 1.5em}
.series figure{margin:0 0 .6em;min-width:0} .series figcaption{font-size:14px;
font-weight:600;overflow-wrap:anywhere} .series figcaption .meta{font-weight:400}
.series svg{width:100%} summary{cursor:pointer;margin:.5em 0}
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
        links = table.links[i] if i < len(table.links) else {}
        cells = "".join(f'<td class="{"n" if c.numeric else ""}">'
                        + (_cell_links(links[c.key]) if c.key in links
                           else _esc(row.get(c.key, ""))) + "</td>" for c in table.columns)
        row_id = table.row_anchors[i] if i < len(table.row_anchors) else ""
        ident = f' id="{_esc(row_id)}"' if row_id else ""
        body.append(f'<tr{ident} class="{table.style(i) or ""}">{cells}</tr>')
    anchor = f' id="{_esc(table.anchor)}"' if table.anchor else ""
    back = f' <a class="meta" href="#{_esc(chart_anchor)}">(chart)</a>' if chart_anchor else ""
    title = f"<h3>{_esc(table.title)}{back}</h3>" if table.title else \
        (f'<p class="meta">{back}</p>' if back else "")
    caption = f'<p class="meta">{_esc(table.caption)}</p>' if table.caption else ""
    # the id sits on the box itself: a table without a title is still a link target
    return (f'{title}<div class="scroll"{anchor}><table><tr>{head}</tr>{"".join(body)}'
            f"</table></div>{caption}")


def _cell_links(links: list[Link]) -> str:
    return ", ".join(f'<a href="{_esc(link.href)}">{_esc(link.label)}</a>' for link in links)


def stacked_chart(chart: StackedBarChart) -> str:
    """One bar per case, tiers stacked left to right, 100% = every CPU of the machine."""
    colors = dict(zip(chart.tiers, palette(len(chart.tiers)), strict=True))
    legend = " ".join(f'<span style="display:inline-block;width:.9em;height:.9em;'
                      f'background:{colors[t]}"></span> {_esc(t)}' for t in chart.tiers)
    rows = []
    for bar in chart.bars:
        parts = "".join(f'<div title="{_esc(t)} {share:.1%}" style="width:{share * 100:.2f}%;'
                        f'background:{colors.get(t, "#999")}"></div>'
                        for t, share in bar.parts)
        label = (f'<a href="#{_esc(bar.anchor)}">{_esc(bar.label)}</a>' if bar.anchor
                 else _esc(bar.label))
        total = sum(share for _, share in bar.parts)
        rows.append(f'<tr><td>{label}</td><td style="width:60%"><div style="display:flex;'
                    f'height:1.1em;background:#eee">{parts}</div></td>'
                    f'<td class="n">{total:.0%}</td></tr>')
    anchor = f' id="{_esc(chart.anchor)}"' if chart.anchor else ""
    note = f'<p class="meta">{_esc(chart.note)}</p>' if chart.note else ""
    return (f'<h3{anchor}>{_esc(chart.title)}</h3><p class="meta">{legend}</p>'
            f'<div class="scroll" style="width:100%"><table style="width:100%">'
            f'{"".join(rows)}</table></div>{note}')


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


# --- time series ------------------------------------------------------------------
SERIES_MAX_POINTS = 300      # intervals drawn per run; more are merged for drawing
SERIES_TOOLTIPS = 4000       # hover boxes per page (each carries its numbers as text)
SERIES_OPEN = 12             # more charts than this: the grid starts folded
SERIES_W = 560               # chart width in px (the page shows two side by side)
SERIES_LEFT, SERIES_RIGHT = 64, 12
ONE_RUN = {"ops": "#4e79a7", "p50": "#59a14f", "p99": "#e15759"}
WARMUP_FILL, ERROR_FILL = "#e9e9e9", "#d62728"


def per_second(operation: str) -> str:
    """The rate of a measurement's operation: "batch of 100 rows" -> "batches/s"."""
    head = operation.split(" of ")[0].strip() or "operation"
    plural = head + ("es" if head.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{plural}/s"


def _num(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def merge_points(points: list[SeriesPoint], limit: int = SERIES_MAX_POINTS
                 ) -> tuple[list[SeriesPoint], int]:
    """At most `limit` points: k neighbours merged (operations and times added, p50
    weighted by operations, p99 the highest, so a stall still shows); returns k."""
    k = max(1, math.ceil(len(points) / limit))
    if k == 1:
        return points, 1
    out = []
    for i in range(0, len(points), k):
        group = points[i:i + k]
        dur, ops = sum(p.dur_s for p in group), sum(p.ops for p in group)
        busy = [p.busy_s for p in group]
        weighted = [(p.p50_us, p.ops) for p in group if p.p50_us is not None]
        weight = sum(w for _, w in weighted)
        p50 = (sum(v * w for v, w in weighted) / weight if weight else
               (sum(v for v, _ in weighted) / len(weighted) if weighted else None))
        p99s = [p.p99_us for p in group if p.p99_us is not None]
        out.append(SeriesPoint(
            group[0].t_s, dur, any(p.warmup for p in group), ops, ops / dur,
            sum(p.errors for p in group),
            None if any(b is None for b in busy) else sum(b or 0.0 for b in busy),
            p50, max(p99s) if p99s else None))
    return out, k


def _step_path(points: list[SeriesPoint], value: Any, sx: Any, sy: Any) -> str:
    """A step line: each interval a flat segment over its span; gaps where no value."""
    d, prev_end = [], None
    for p in points:
        v = value(p)
        if v is None:
            prev_end = None
            continue
        x0, x1, y = sx(p.t_s), sx(p.t_s + p.dur_s), sy(v)
        if prev_end is not None and abs(x0 - prev_end) < 0.6:
            d.append(f"V{y:.1f}H{x1:.1f}")
        else:
            d.append(f"M{x0:.1f} {y:.1f}H{x1:.1f}")
        prev_end = x1
    return "".join(d)


def spread_latency(points: list[SeriesPoint]) -> list[SeriesPoint]:
    """In-process cases file an iteration's latencies under the interval holding its
    end; for drawing, an interval that ran operations but holds no latency takes that
    of the next interval that does (the iteration it was part of), within one phase
    and never across an interval with no operation (a stall stays a gap)."""
    out = list(points)
    carry: SeriesPoint | None = None
    for i in range(len(out) - 1, -1, -1):
        p = out[i]
        if p.p50_us is not None or p.p99_us is not None:
            carry = p
        elif p.ops <= 0 or carry is None or carry.warmup != p.warmup:
            carry = None
        else:
            out[i] = dataclasses.replace(p, p50_us=carry.p50_us, p99_us=carry.p99_us)
    return out


def _line(d: str, color: str, dash: str = "", width: float = 1.6) -> str:
    if not d:
        return ""
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<path d="{d}" fill="none" stroke="{color}" stroke-width="{width}"'
            f'{dashed} stroke-linejoin="round"/>')


def _spans(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Touching or overlapping [start, end) spans joined."""
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1e-9:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _tooltip(runs: list[list[SeriesPoint]], index: int, unit: str) -> str:
    lines = []
    for r, points in enumerate(runs):
        if index >= len(points):
            continue
        p = points[index]
        who = f"run {r + 1}: " if len(runs) > 1 else ""
        text = (f"{who}{_num(p.t_s)}–{_num(p.t_s + p.dur_s)} s"
                f"{' (warm-up)' if p.warmup else ''}: {p.ops_per_s:,.0f} {unit}")
        if p.busy_ops_per_s is not None and p.busy_s is not None and p.busy_s < 0.98 * p.dur_s:
            text += f" ({p.busy_ops_per_s:,.0f} while running)"
        if p.p50_us is not None:
            text += f", p50 {p.p50_us:,.1f} µs"
        if p.p99_us is not None:
            text += f", p99 {p.p99_us:,.1f} µs"
        if p.errors:
            text += f", {p.errors:,} errors"
        lines.append(text)
    return "\n".join(lines)


def series_chart(m: Measurement, link: str, tooltips: bool) -> str:
    """One case: throughput per interval (top) and p50/p99 latency on a log scale
    (bottom) against seconds since each run's first operation; warm-up shaded."""
    raw = [r for r in series_runs(m.series) if r]
    if not raw:
        return ""
    merged = [merge_points(r) for r in raw]
    runs = [points for points, _ in merged]
    k = max(step for _, step in merged)
    unit = per_second(m.operation)
    several = len(runs) > 1
    colors = palette(len(runs)) if several else [ONE_RUN["ops"]]
    points = [p for r in runs for p in r]
    busy = not several and any(p.busy_s is not None and p.ops and p.busy_s < 0.9 * p.dur_s
                               for p in points)
    t_end = max(p.t_s + p.dur_s for p in points) or 1.0
    # the scale ignores short intervals (the last one of a run, the cut where measuring
    # began): a few operations over a few ms are a spike, not a rate; they are drawn
    # clipped at the top, their hover box says the figure
    width = max(p.dur_s for p in points)
    full = [p for p in points if p.dur_s >= 0.5 * width] or points
    rates = [p.ops_per_s for p in full]
    if busy:
        rates += [p.busy_ops_per_s or 0.0 for p in full]
    top = round_up(max(rates) or 1.0)
    lat = [v for p in points for v in (p.p50_us, p.p99_us) if v is not None and v > 0]
    x0, pw = SERIES_LEFT, SERIES_W - SERIES_LEFT - SERIES_RIGHT
    y0, h1 = 8, 120
    y2, h2 = y0 + h1 + 12, 90
    bottom = y2 + h2 if lat else y0 + h1

    def sx(t: float) -> float:
        return x0 + t / t_end * pw

    def sy(v: float) -> float:
        return y0 + h1 - min(v, top) / top * h1

    parts: list[str] = []
    panels = [(y0, h1)] + ([(y2, h2)] if lat else [])
    warm = _spans([(p.t_s, p.t_s + p.dur_s) for p in points if p.warmup])
    for lo, hi in warm:
        for py, ph in panels:
            parts.append(f'<rect x="{sx(lo):.1f}" y="{py}" width="{max(sx(hi) - sx(lo), 1):.1f}"'
                         f' height="{ph}" fill="{WARMUP_FILL}"/>')
        parts.append(_text(sx(lo) + 3, y0 + 12, "warm-up", FONT - 2))
    step = nice_step(top, 4)
    v = 0.0
    while v <= top * 1.0001:
        y = sy(v)
        parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{"#999" if v == 0 else "#e0e0e0"}"/>')
        parts.append(_text(x0 - 5, y + 4, tick_label(v), FONT - 2, "end"))
        v += step
    mid1 = y0 + h1 / 2
    parts.append(f'<text transform="rotate(-90 13 {mid1:.0f})" x="13" y="{mid1:.0f}" '
                 f'font-size="{FONT - 1}" text-anchor="middle">{_esc(unit)}</text>')
    if lat:
        lo, hi = math.log10(min(lat)) - 0.1, math.log10(max(lat)) + 0.1
        if hi - lo < 1:
            mid = (hi + lo) / 2
            lo, hi = mid - 0.5, mid + 0.5

        def sl(v: float) -> float:
            return y2 + h2 - (math.log10(v) - lo) / (hi - lo) * h2

        for value in _log_ticks(lo, hi):
            y = sl(value)
            parts.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                         'stroke="#e0e0e0"/>')
            parts.append(_text(x0 - 5, y + 4, tick_label(value), FONT - 2, "end"))
        parts.append(f'<rect x="{x0}" y="{y2}" width="{pw}" height="{h2}" fill="none" '
                     'stroke="#bbb"/>')
        mid2 = y2 + h2 / 2
        parts.append(f'<text transform="rotate(-90 13 {mid2:.0f})" x="13" y="{mid2:.0f}" '
                     f'font-size="{FONT - 1}" text-anchor="middle">µs (log)</text>')
    tstep = nice_step(t_end, 6)
    t = 0.0
    while t <= t_end * 1.0001:
        x = sx(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}" '
                     'stroke="#999"/>')
        parts.append(_text(x, bottom + 16, _num(t), FONT - 2, "middle"))
        t += tstep
    parts.append(_text(x0 + pw / 2, bottom + 32, "seconds since the run's first operation",
                       FONT - 1, "middle"))
    for r, run in enumerate(runs):
        color = colors[r]
        if busy:
            parts.append(_line(_step_path(run, lambda p: p.busy_ops_per_s, sx, sy), color,
                               "4 3", 1.2))
        parts.append(_line(_step_path(run, lambda p: p.ops_per_s, sx, sy), color, "", 1.8))
        for p in run:
            if p.errors:
                parts.append(f'<rect x="{sx(p.t_s):.1f}" y="{y0 + h1 - 5}" '
                             f'width="{max(sx(p.t_s + p.dur_s) - sx(p.t_s), 1.5):.1f}" '
                             f'height="5" fill="{ERROR_FILL}"/>')
        if lat:
            run = spread_latency(run)
            p50c = colors[r] if several else ONE_RUN["p50"]
            p99c = colors[r] if several else ONE_RUN["p99"]
            parts.append(_line(_step_path(run, lambda p: p.p50_us, sx, sl), p50c, "", 1.5))
            parts.append(_line(_step_path(run, lambda p: p.p99_us, sx, sl), p99c,
                               "5 3" if several else "", 1.5))
    if tooltips:
        longest = max(runs, key=len)
        for i, p in enumerate(longest):
            xa, xb = sx(p.t_s), sx(p.t_s + p.dur_s)
            parts.append(f'<rect x="{xa:.1f}" y="{y0}" width="{max(xb - xa, 1):.1f}" '
                         f'height="{bottom - y0}" fill="#000" fill-opacity="0">'
                         f"<title>{_esc(_tooltip(runs, i, unit))}</title></rect>")
    legend: list[tuple[str, str, str]] = []      # (label, colour, dash)
    if several:
        legend += [(f"run {r + 1}", colors[r], "") for r in range(len(runs))]
        legend.append(("top: " + unit + (" · bottom: p50 solid, p99 dashed" if lat else ""),
                       "", ""))
    else:
        legend.append((unit, ONE_RUN["ops"], ""))
        if busy:
            legend.append(("while running", ONE_RUN["ops"], "4 3"))
        if lat:
            legend += [("p50 µs", ONE_RUN["p50"], ""), ("p99 µs", ONE_RUN["p99"], "")]
    if any(p.errors for p in points):
        legend.append(("errors", ERROR_FILL, "box"))
    lx, ly = float(x0), bottom + 52
    for label, color, dash in legend:
        width = CHAR_W * 0.92 * len(label) + (28 if color else 0)
        if lx + width > SERIES_W and lx > x0:
            lx, ly = float(x0), ly + 18
        if dash == "box":
            parts.append(f'<rect x="{lx}" y="{ly - 9}" width="18" height="6" fill="{color}"/>')
        elif color:
            parts.append(_line(f"M{lx} {ly - 4}h18", color, dash, 2))
        parts.append(_text(lx + (24 if color else 0), ly, label, FONT - 2))
        lx += width + 14
    height = ly + 8
    interval = _number_text((m.series or {}).get("interval_s"))
    note = [f"interval {interval} s" if interval else "",
            f"{len(runs)} runs" if several else "",
            f"each point merges {k} intervals (p99: the highest)" if k > 1 else ""]
    meta = "; ".join(x for x in note if x)
    ident = f' id="series-{_esc(m.anchor)}"' if m.anchor else ""
    small = f' <span class="meta">({_esc(meta)})</span>' if meta else ""
    return (f"<figure{ident}><figcaption>{_esc(m.name)}{small}{link}</figcaption>"
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SERIES_W} {height:.0f}" '
            f'width="{SERIES_W}" role="img" aria-label="{_esc(m.name)}: time series">'
            + "".join(parts) + "</svg></figure>")


def _number_text(value: Any) -> str:
    return _num(float(value)) if isinstance(value, int | float) and value > 0 else ""


def series_section(report: Report) -> str:
    """The time series of every case that recorded one, as a grid of small charts."""
    cases = [m for m in report.measurements if series_runs(m.series)
             and any(series_runs(m.series))]
    if not cases:
        return ""
    rows = {a for t in report.tables() for a in t.row_anchors if a}
    table = next((t.anchor for t in report.tables() if t.anchor), "")
    count = sum(len(r) for m in cases for r in series_runs(m.series))
    tooltips = count <= SERIES_TOOLTIPS
    charts = []
    for m in cases:
        if m.anchor and m.anchor in rows:
            link = f' <a class="meta" href="#{_esc(m.anchor)}">(table row)</a>'
        else:
            link = f' <a class="meta" href="#{_esc(table)}">(table)</a>' if table else ""
        charts.append(series_chart(m, link, tooltips))
    grid = f'<div class="series">{"".join(charts)}</div>'
    if len(cases) > SERIES_OPEN:
        grid = (f"<details><summary>Time series of {len(cases)} cases (show)</summary>"
                f"{grid}</details>")
    in_process = any(p.busy_s is not None for m in cases for r in series_runs(m.series)
                     for p in r)
    several = any(len(series_runs(m.series)) > 1 for m in cases)
    text = ("Per interval, counted from each run's first timed operation (warm-up, when "
            "recorded, shaded): top, operations completed in the interval over its wall "
            "time; bottom, p50 and p99 latency of the operations completed (timed) in the "
            "interval, log scale. A flat zero is a stall.")
    if several:
        text += " A case measured in several runs has one line per run."
    if in_process:
        text += (" In-process cases: dashed, where iterations paused, the rate while "
                 "operations ran; an iteration's latency, filed under the interval where "
                 "it ended, is drawn over the intervals it ran in.")
    if not tooltips:
        text += " (Too many intervals for hover boxes.)"
    return (f'<h2 id="time-series">Time series</h2><p class="meta">{_esc(text)}</p>'
            f"{grid}")


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
            elif isinstance(block, StackedBarChart):
                parts.append(stacked_chart(block))
            else:
                parts.append(f"<p>{_esc(block)}</p>")
    parts.append(series_section(report))
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
