"""A self-contained HTML report: the table plus SVG charts, no scripts, works offline.

Charts: ops/s per case grouped by operation, with the 95% confidence interval drawn
as an error bar (min-max as a thin line), and latency percentiles per case.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from dbstand.report.render import footnote_lines
from dbstand.report.table import COLUMNS, formatted, stack_label, table_rows
from dbstand.results.store import ResultsFile
from dbstand.workloads.batch import report as batch

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 6px}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.unstable{background:#fff6d5} tr.failed{background:#fde2e2}
.meta{color:#555;font-size:13px} svg{margin:1em 0} h2{margin-top:1.6em}
"""


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _series_key(r: dict[str, Any]) -> str:
    if r.get("workload") == "batch":
        return f"{stack_label(r)} {r.get('api', '')}"
    return f"{stack_label(r)} [{r['mode']}]"


def ops_chart(records: list[dict[str, Any]], value: str = "ops_per_s",
              unit: str = "ops/s") -> str:
    """Grouped horizontal bars: one group per op, one bar per stack/mode (the kv
    study's "all in one" chart); `value` picks the figure (batch: rows/s)."""
    ok = [dict(r, ops_per_s=r[value], ops_per_s_max=r.get(f"{value}_max") or r[value])
          for r in records if r.get("status") == "ok" and r.get(value)]
    if not ok:
        return "<p>No successful cases to chart.</p>"
    ops = list(dict.fromkeys(r["op"] for r in ok))
    series = list(dict.fromkeys(_series_key(r) for r in ok))
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    top = max(r["ops_per_s_max"] or r["ops_per_s"] for r in ok) * 1.08
    bar_h, gap, label_w, width = 16, 10, 90, 640
    rows = []
    y = 10
    for op in ops:
        group = [r for r in ok if r["op"] == op]
        rows.append(f'<text x="0" y="{y + bar_h * len(group) / 2 + 4}" font-size="12">'
                    f"{_esc(op)}</text>")
        for r in group:
            scale = width / top
            w = r["ops_per_s"] * scale
            mean = r["ops_per_s"]
            half = mean * (r.get("ci95_pct") or 0) / 100
            lo, hi = (mean - half) * scale, (mean + half) * scale
            cy = y + bar_h / 2
            flag = " (UNSTABLE)" if r.get("unstable") else ""
            rows.append(
                f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                f'fill="{colors[_series_key(r)]}"><title>{_esc(_series_key(r))} {_esc(op)}: '
                f'{mean:,.0f} {unit} ±{r.get("ci95_pct") or 0:.1f}%{flag}</title></rect>'
                f'<line x1="{label_w + lo:.1f}" x2="{label_w + hi:.1f}" y1="{cy}" y2="{cy}" '
                f'stroke="#000" stroke-width="1.5"/>'
                f'<text x="{label_w + max(w, hi) + 6:.1f}" y="{y + bar_h - 4}" '
                f'font-size="11">'
                f'{mean:,.0f}{flag}</text>')
            y += bar_h
        y += gap
    legend = []
    lx, ly = label_w, y
    for s in series:
        item_w = 14 + 7 * len(s) + 16
        if lx + item_w > label_w + width + 100 and lx > label_w:  # wrap the legend
            lx, ly = label_w, ly + 16
        legend.append(f'<rect x="{lx}" y="{ly + 4}" width="10" height="10" '
                      f'fill="{colors[s]}"/><text x="{lx + 14}" y="{ly + 13}" '
                      f'font-size="11">{_esc(s)}</text>')
        lx += item_w
    y = ly
    height = y + 24
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + width + 120}" '
            f'height="{height}" role="img" aria-label="operations per second">'
            + "".join(rows) + "".join(legend) + "</svg>"
            f'<p class="meta">Bars: mean {unit} (higher is better); black line: 95% '
            "confidence interval of the mean.</p>")


def latency_chart(records: list[dict[str, Any]]) -> str:
    """p50/p99/p99.9 per case on a log scale (latencies span orders of magnitude)."""
    import math

    ok = [r for r in records if r.get("status") == "ok" and r.get("latency_us")]
    if not ok:
        return "<p>No latency recorded.</p>"
    keys = ("p50", "p90", "p99", "p999")
    values = [r["latency_us"][k] for r in ok for k in keys if r["latency_us"].get(k)]
    lo = math.log10(max(min(values), 0.1))
    hi = math.log10(max(values)) + 0.1
    label_w, width, bar_h = 260, 520, 14
    parts = []
    y = 20
    for r in ok:
        label = f"{r['stack']} {r['op']} [{r['mode']}]"
        parts.append(f'<text x="0" y="{y + 10}" font-size="11">{_esc(label)}</text>')
        for i, k in enumerate(keys):
            v = r["latency_us"].get(k)
            if not v:
                continue
            x = label_w + (math.log10(max(v, 0.1)) - lo) / (hi - lo) * width
            parts.append(f'<circle cx="{x:.1f}" cy="{y + 6}" r="4" fill="{PALETTE[i]}">'
                         f"<title>{_esc(label)} {k}: {v:,.1f} µs</title></circle>")
        y += bar_h
    legend = "".join(
        f'<circle cx="{label_w + i * 70}" cy="8" r="4" fill="{PALETTE[i]}"/>'
        f'<text x="{label_w + i * 70 + 8}" y="12" font-size="11">{k}</text>'
        for i, k in enumerate(keys))
    ticks = []
    for exp in range(math.floor(lo), math.ceil(hi) + 1):
        x = label_w + (exp - lo) / (hi - lo) * width
        if label_w <= x <= label_w + width:
            ticks.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="16" y2="{y}" stroke="#ddd"/>'
                         f'<text x="{x:.1f}" y="{y + 12}" font-size="10">{10 ** exp:g} µs'
                         "</text>")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + width + 40}" '
            f'height="{y + 20}" role="img" aria-label="latency percentiles">'
            + "".join(ticks) + legend + "".join(parts) + "</svg>"
            '<p class="meta">Per-operation latency percentiles, log scale (lower is '
            "better).</p>")


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{_esc(line)}</li>" for line in lines) + "</ul>" if lines \
        else ""


def batch_body(results: ResultsFile) -> str:
    """Batch runs: rows/s at the largest size per op, then the study-style tables."""
    largest: dict[str, int] = {}
    for r in results.cases:
        largest[r["op"]] = max(largest.get(r["op"], 0), int(r.get("rows") or 0))
    top = [r for r in results.cases if int(r.get("rows") or 0) == largest.get(r["op"])]
    parts = ["<h2>Rows per second at the largest size</h2>",
             ops_chart(top, "rows_per_s", "rows/s")]
    for section in batch.sections(results.cases):
        cols = batch.columns(section)
        head = "".join(f"<th>{_esc(t)}</th>" for t, _ in cols)
        body = "".join(
            "<tr>" + "".join(f'<td class="{"n" if right else ""}">{_esc(v)}</td>'
                             for v, (_, right) in zip(batch.row(section, line), cols,
                                                      strict=True)) + "</tr>"
            for line in section.lines)
        parts.append(f"<h2>{_esc(section.op)} on {_esc(section.target)}: seconds per batch, "
                     f"COMMIT included (lower is better)</h2><table><tr>{head}</tr>{body}"
                     f"</table><p>{_esc(batch.ranking_sentence(section))}</p>")
    parts.append(_list(batch.footnotes(results)))
    parts.append(f'<p class="meta">{_esc(batch.CAPTION)}</p>')
    return "".join(parts)


def generic_body(results: ResultsFile) -> str:
    """kv and other per-operation runs: throughput, latency, every case, footnotes."""
    rows = table_rows(results.cases)
    head = "".join(f"<th>{_esc(c.title)}</th>" for c in COLUMNS)
    body = []
    for row in rows:
        cls = "failed" if row["failed"] else ("unstable" if row["unstable"] else "")
        cells = "".join(
            f'<td class="{"n" if c.numeric else ""}">{_esc(formatted(row, c.key))}</td>'
            for c in COLUMNS)
        body.append(f'<tr class="{cls}">{cells}</tr>')
    return (f"<h2>Throughput</h2>{ops_chart(results.cases)}"
            f"<h2>Latency</h2>{latency_chart(results.cases)}"
            f"<h2>All cases</h2><table><tr>{head}</tr>{''.join(body)}</table>"
            f"{_list(footnote_lines(results, rows))}")


def render_html(results: ResultsFile) -> str:
    header = results.header or {}
    env = next((c.get("environment") for c in results.cases if c.get("environment")), {})
    main = batch_body(results) if batch.is_batch(results) else generic_body(results)
    env_rows = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>"
                       for k, v in env.items() if k not in ("server", "packages"))
    server = env.get("server") or {}
    env_rows += "".join(f"<tr><th>server {_esc(k)}</th><td>{_esc(v)}</td></tr>"
                        for k, v in server.items())
    title = f"dbstand {header.get('workload', '')} — run {header.get('run_id', '?')}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>
<style>{CSS}</style></head><body>
<h1>{_esc(title)}</h1>
<p class="meta">Started {_esc(header.get('started_at', '?'))}; status: {_esc(results.status)};
command: <code>{_esc(' '.join(header.get('argv', [])))}</code></p>
{main}
<h2>Environment</h2><table>{env_rows}</table>
<p class="meta">Compare figures within one run, as ratios; absolute numbers do not carry
across machines.</p>
</body></html>
"""


def write_html(results: ResultsFile, path: Path) -> None:
    """Write atomically: a report is either the old one or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render_html(results), encoding="utf-8")
    os.replace(tmp, path)
