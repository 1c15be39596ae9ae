"""The batch workload's report: per operation, seconds and rows/s per (api, rows),
the ranking (fastest first at the largest size, and slowest first at every size
where the order changes, as the study printed it), each api against the baseline
api (executemany unless --baseline says otherwise) and against the limit row at
every size, and a scaling verdict per (api, op). Cases run with a key predicate
other than the index one (`--key-predicate cast`) get their own tables, labelled.

Everything is computed from the results file's records, so `dbstand report FILE`
shows exactly what the run showed. Units and directions are named in every table
(methodology: "Honesty rules").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dbstand.engine.machine_speed import unstable_lines
from dbstand.network.rtt import DIRECT, path_of
from dbstand.report import model
from dbstand.workloads.batch.scaling import SUPERLINEAR_EXPONENT, ScalingFit, scaling
from dbstand.workloads.network_axis import path_lines

OP_ORDER = ("insert", "update", "delete")
LIMIT_PREFIX = "limit:"
DEFAULT_BASELINE = "executemany"
INDEX = "index"
#: the case parameter of the RTT axis (workloads/network_axis.py)
PATH_PARAM = "db_rtt"
#: how a line found by a predicate other than the index one is labelled
PREDICATE_LABELS = {"cast": "cast key, no index"}
CAPTION = ("seconds: mean time of one batch of N rows, COMMIT included (↓ lower is better); "
           "±: 95% CI of the mean (stop rule); [min–max]: spread of a fixed repetition; "
           f"rows/s ↑ higher is better; b: exponent of seconds ~ rows^b, SUPERLINEAR above "
           f"{SUPERLINEAR_EXPONENT} over 3+ sizes (superlinear?: not beyond the runs' "
           "spread); vs executemany (or the --baseline api): seconds over the baseline's "
           "at that size (↓ below 1: faster); vs limit: times the best limit row at that "
           "size; ! unstable (95% CI wider than the target, fixed repetitions included).")


@dataclass
class Line:
    """One (target, stack, api, op): its cells by row count, fit and rank."""

    target: str
    stack: str
    api: str
    op: str
    limit: bool
    predicate: str = INDEX
    path: str = ""
    form: str = ""
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)
    fit: ScalingFit | None = None
    rank: int | None = None
    vs_best: float | None = None
    vs_limit: float | None = None
    vs_baseline: float | None = None

    @property
    def name(self) -> str:
        if self.limit:
            return f"limit {self.api[len(LIMIT_PREFIX):]}"
        return f"{self.stack} {self.api}{self.tag}"

    @property
    def tag(self) -> str:
        """` [cast key, no index]` for a line found through another key predicate."""
        if self.predicate == INDEX:
            return ""
        return f" [{PREDICATE_LABELS.get(self.predicate, self.predicate + ' key')}]"

    def ok(self, rows: int) -> dict[str, Any] | None:
        cell = self.cells.get(rows)
        return cell if cell is not None and cell.get("status") == "ok" else None


@dataclass
class Section:
    """One operation on one target: its lines ranked at the largest row count."""

    target: str
    op: str
    sizes: list[int]
    lines: list[Line]
    predicate: str = INDEX
    baseline: Line | None = None
    path: str = ""

    @property
    def title(self) -> str:
        tag = f", key predicate {self.predicate} (the study's pitfall, on purpose: the " \
              "index cannot serve it)" if self.predicate != INDEX else ""
        return f"batch {self.op} on {self.target}{tag}{path_title(self.path)}"

    @property
    def networked(self) -> bool:
        """A path with an asked RTT above 0: the floor columns apply."""
        return bool(self.path) and self.path != DIRECT and path_of(self.path).rtt_us != 0

    @property
    def ranked_at(self) -> int:
        return self.sizes[-1]

    @property
    def apis(self) -> list[Line]:
        return [line for line in self.lines if not line.limit]

    @property
    def limits(self) -> list[Line]:
        return [line for line in self.lines if line.limit]


def path_title(path: str) -> str:
    """How a section names its path: nothing without the RTT axis."""
    if not path:
        return ""
    return f", path: {path_of(path).title}"


def path_order(path: str) -> int:
    """direct, then the proxy without delay, then by RTT."""
    if not path or path == DIRECT:
        return -1
    return path_of(path).rtt_us or 0


NETWORK_CAPTION = (" Paths (--db-rtt): direct, or through Toxiproxy with half the RTT each "
                   "way; round trips: request-then-answer turns the proxy counted per batch "
                   "in the timed runs; floor s: round trips x the RTT measured on the path, "
                   "the time the network alone takes; ÷ floor near 1: round-trip bound.")


def predicate_of(record: dict[str, Any]) -> str:
    return str((record.get("params") or {}).get("key_predicate") or INDEX)


def baseline_of(records: list[dict[str, Any]]) -> tuple[str | None, str]:
    """(stack or None, api) of the baseline the run recorded, else executemany."""
    named = next((str(r["baseline"]) for r in records if r.get("baseline")), DEFAULT_BASELINE)
    stack, sep, api = named.rpartition(":")
    if sep and not named.startswith(LIMIT_PREFIX):
        return stack or None, api
    return None, named


def sections(records: list[dict[str, Any]]) -> list[Section]:
    """Group records into per-(target, op, key predicate) sections with fits, ranks,
    limits and the baseline line."""
    lines: dict[tuple[str, str, str, str, str, str], Line] = {}
    for r in records:
        params = r.get("params") or {}
        api = str(r.get("api") or params.get("api", "?"))
        rows = int(r.get("rows") or params.get("rows", 0))
        limit = bool(r.get("limit", params.get("limit", api.startswith(LIMIT_PREFIX))))
        key = (str(r.get("target")), "" if limit else str(r.get("stack")), api, str(r.get("op")),
               predicate_of(r), str(params.get(PATH_PARAM) or ""))
        line = lines.setdefault(key, Line(key[0], str(r.get("stack")), api, key[3], limit,
                                          key[4], key[5]))
        line.form = line.form or str(r.get("api_form") or "")
        line.cells[rows] = r
    base_stack, base_api = baseline_of(records)
    out: list[Section] = []
    for target, op, predicate, path in dict.fromkeys((k[0], k[3], k[4], k[5]) for k in lines):
        members = [line for k, line in lines.items()
                   if k[0] == target and k[3] == op and k[4] == predicate and k[5] == path]
        if predicate != INDEX:  # the limit rows (always correct) are the shared reference
            members += [line for k, line in lines.items()
                        if k[0] == target and k[3] == op and line.limit and k[5] == path]
        sizes = sorted({n for line in members for n in line.cells})
        for line in members:
            points = [(n, c["seconds"], c.get("seconds_min") or c["seconds"],
                       c.get("seconds_max") or c["seconds"])
                      for n in sizes if (c := line.ok(n)) and c.get("seconds")]
            line.fit = scaling(points)
        section = Section(target, op, sizes, members, predicate, path=path)
        section.baseline = _baseline_line(section, base_stack, base_api)
        _rank(section)
        out.append(section)
    out.sort(key=lambda s: (s.target, OP_ORDER.index(s.op) if s.op in OP_ORDER else 9,
                            s.predicate != INDEX, s.predicate, path_order(s.path)))
    return out


def _baseline_line(section: Section, stack: str | None, api: str) -> Line | None:
    """The line every other is compared with: the named stack's api, else the first
    stack's line of that api (each stack's own is preferred in `baseline_for`)."""
    candidates = [line for line in section.lines if line.api == api
                  and (stack is None or line.stack == stack)]
    return candidates[0] if candidates else None


def baseline_for(section: Section, line: Line) -> Line | None:
    """A line's reference: its own stack's baseline api when it has one (psycopg's
    executemany for psycopg's apis), else the section's."""
    base = section.baseline
    if base is None or line.limit:
        return base
    own = next((x for x in section.apis if x.api == base.api and x.stack == line.stack),
               None)
    return own or base


def _rank(section: Section) -> None:
    n = section.ranked_at
    timed = sorted((c["seconds"], i) for i, line in enumerate(section.apis)
                   if (c := line.ok(n)) is not None)
    best = timed[0][0] if timed else None
    limit_times = [c["seconds"] for line in section.limits if (c := line.ok(n))]
    limit = min(limit_times) if limit_times else None
    apis = section.apis
    for rank, (seconds, i) in enumerate(timed, start=1):
        apis[i].rank = rank
        apis[i].vs_best = seconds / best if best else None
        apis[i].vs_limit = seconds / limit if limit else None
        ref = baseline_for(section, apis[i])
        ref_cell = ref.ok(n) if ref else None
        apis[i].vs_baseline = seconds / ref_cell["seconds"] if ref_cell else None
    for line in section.limits:
        c = line.ok(n)
        line.vs_limit = c["seconds"] / limit if c and limit else None
    unranked = [line for line in apis if line.rank is None]
    ordered = sorted((line for line in apis if line.rank is not None),
                     key=lambda line: line.rank or 0)
    section.lines = ordered + unranked + sorted(section.limits, key=lambda line: line.api)


# --- formatting ---------------------------------------------------------------------
def fmt_seconds(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"


def fmt_rate(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def cell_text(cell: dict[str, Any] | None) -> str:
    """Seconds with its spread: ±CI% under the stop rule, [min–max] when fixed."""
    if cell is None:
        return "-"
    if cell.get("status") != "ok":
        return "FAILED"
    text = fmt_seconds(cell.get("seconds"))
    if str(cell.get("repetition", "")).startswith("fixed"):
        text += f" [{fmt_seconds(cell.get('seconds_min'))}–{fmt_seconds(cell.get('seconds_max'))}]"
    elif cell.get("ci95_pct") is not None:
        text += f" ±{cell['ci95_pct']:.1f}%"
    if cell.get("unstable"):
        text += " !"
    return text


def fit_text(fit: ScalingFit | None) -> tuple[str, str]:
    if fit is None:
        return "-", "- (1 size)"
    label = fit.label()
    return f"{fit.exponent:.2f}", label.upper() if fit.flagged else label


def _rows_per_s(line: Line, n: int) -> float | None:
    c = line.ok(n)
    return c.get("rows_per_s") if c else None


# --- terminal ---------------------------------------------------------------------
def baseline_title(section: Section) -> str:
    return f"vs {section.baseline.api} ↓" if section.baseline else "vs baseline ↓"


def columns(section: Section) -> list[tuple[str, bool]]:
    cols = [("#", True), ("stack", False), ("api", False)]
    cols += [(f"{n:,} rows s", True) for n in section.sizes]
    cols += [(f"rows/s @{section.ranked_at:,} ↑", True), (baseline_title(section), True),
             ("vs limit", True), ("b", True), ("scaling", False)]
    if section.networked:
        cols += [("round trips", True), ("floor s", True), ("÷ floor", True)]
    return cols


def floor(cell: dict[str, Any] | None) -> tuple[float | None, float | None]:
    """(round trips per batch, their floor in seconds: round trips x the measured RTT),
    both measured on the case's path; None when not recorded."""
    net = (cell or {}).get("network") or {}
    trips, rtt_ms = net.get("round_trips_per_op"), net.get("measured_rtt_ms")
    if trips is None or rtt_ms is None:
        return None, None
    return trips, trips * max(rtt_ms, 0.0) / 1000


def row(section: Section, line: Line) -> list[str]:
    exponent, verdict = fit_text(line.fit)
    stack, api = ("limit", line.api[len(LIMIT_PREFIX):]) if line.limit else \
        (line.stack, line.api + line.tag)
    out = [str(line.rank or "") if not line.limit else "", stack, api,
           *(cell_text(line.cells.get(n)) for n in section.sizes),
           fmt_rate(_rows_per_s(line, section.ranked_at)),
           fmt_ratio(line.vs_baseline), fmt_ratio(line.vs_limit), exponent, verdict]
    if section.networked:
        cell = line.ok(section.ranked_at)
        trips, seconds = floor(cell)
        out += ["-" if trips is None else f"{trips:,.0f}", fmt_seconds(seconds),
                fmt_ratio(cell["seconds"] / seconds) if cell and seconds else "-"]
    return out


def path_sentence(section: Section) -> str | None:
    """The section's path as asked and as measured (medians over its cases)."""
    lines = path_lines([c for line in section.lines for c in line.cells.values()],
                       per="batch")
    return lines[0] if lines else None


def path_table(records: list[dict[str, Any]]) -> list[model.Table]:
    """Per op (index key), at its largest size: seconds per batch on each path, and
    that over the direct path's, so a reader sees which APIs the RTT hurts."""
    out = []
    all_sections = [s for s in sections(records) if s.predicate == INDEX]
    for target, op in dict.fromkeys((s.target, s.op) for s in all_sections):
        group = [s for s in all_sections if s.target == target and s.op == op]
        if len(group) < 2:
            continue
        n = max(size for s in group for size in s.sizes)
        direct = next((s for s in group if s.path in ("", DIRECT)), None)
        names = list(dict.fromkeys(line.name for s in group for line in s.lines))
        cols = [model.Column("api", "api"),
                *(model.Column(f"p{i}", f"{path_of(s.path).title} s", True)
                  for i, s in enumerate(group))]
        rows = []
        for name in names:
            base = _cell_of(direct, name, n) if direct else None
            cells = {"api": name}
            for i, s in enumerate(group):
                cell = _cell_of(s, name, n)
                text = cell_text(cell) if cell else "-"
                if cell and cell.get("status") == "ok" and base and s is not direct:
                    text += f" ({cell['seconds'] / base['seconds']:.2f}x)"
                cells[f"p{i}"] = text
            rows.append(cells)
        out.append(model.Table(f"batch {op} on {target} at {n:,} rows: seconds per batch "
                               "on each path (↓ lower is better; (x): over the direct "
                               "path's)", cols, rows, anchor=f"batch-{op}-paths"))
    return out


def _cell_of(section: Section, name: str, n: int) -> dict[str, Any] | None:
    line = next((x for x in section.lines if x.name == name), None)
    return line.cells.get(n) if line else None


def size_ratios(section: Section, line: Line, n: int) -> tuple[float | None, float | None]:
    """At `n` rows: the line's seconds over its baseline's, and over the best limit row."""
    cell = line.ok(n)
    if cell is None:
        return None, None
    ref = baseline_for(section, line)
    ref_cell = ref.ok(n) if ref else None
    limits = [c["seconds"] for x in section.limits if (c := x.ok(n))]
    return (cell["seconds"] / ref_cell["seconds"] if ref_cell else None,
            cell["seconds"] / min(limits) if limits else None)


def ratio_table(section: Section, anchor: str) -> model.Table:
    """Per api and size: seconds against the baseline api and against the limit row."""
    base = section.baseline.api if section.baseline else "baseline"
    cols = [model.Column("api", "api"),
            *(model.Column(f"n{n}", f"{n:,} rows", True) for n in section.sizes)]
    rows = []
    for line in section.apis:
        cells = {"api": line.name}
        for n in section.sizes:
            vs_base, vs_limit = size_ratios(section, line, n)
            cells[f"n{n}"] = "-" if vs_base is None and vs_limit is None else \
                f"{fmt_ratio(vs_base)} / {fmt_ratio(vs_limit)}"
        rows.append(cells)
    return model.Table(f"{section.op}: seconds against {base} / against the limit row, at "
                       "each size (↓ below 1: faster than it)", cols, rows, anchor=anchor)


def order_by_size(section: Section) -> list[tuple[int, list[Line]]]:
    """Per size, the apis measured there, slowest first."""
    out = []
    for n in section.sizes:
        timed = sorted(((c["seconds"], i) for i, line in enumerate(section.apis)
                        if (c := line.ok(n)) is not None), reverse=True)
        if timed:
            out.append((n, [section.apis[i] for _, i in timed]))
    return out


def slowest_first_lines(section: Section) -> list[str]:
    """The study's way: performance from low to high (`a < b`: a is slower), at the
    first size and at every size where the order changes."""
    out: list[str] = []
    if len(section.apis) < 2:
        return out
    last: list[str] | None = None
    same: list[int] = []

    def close() -> None:
        if same and out:
            out[-1] += f" (the same at {', '.join(f'{m:,}' for m in same)} rows)"
        same.clear()

    for n, ordered in order_by_size(section):
        names = [line.api + line.tag for line in ordered]
        if names == last:
            same.append(n)
            continue
        close()
        head = f"{section.op}, slowest first" if last is None else "  order changes"
        out.append(f"{head} at {n:,} rows: {' < '.join(names)}")
        last = names
    close()
    return out


def ranking_sentence(section: Section) -> str:
    n = section.ranked_at
    ranked = [line for line in section.apis if line.rank is not None]
    if not ranked:
        return f"{section.op}: nothing ranked at {n:,} rows"
    order = ", ".join(line.name for line in ranked)
    text = f"{section.op} ranking at {n:,} rows, fastest first: {order}."
    best = ranked[0]
    if best.vs_limit is not None:
        text += f" The best is {best.vs_limit:.2f}x the limit."
    return text


def footnotes(records: list[dict[str, Any]]) -> list[str]:
    """Failures, superlinear warnings, and what each api does."""
    out: list[str] = []
    forms: dict[str, str] = {}
    for section in sections(records):
        for line in section.lines:
            for n, c in sorted(line.cells.items()):
                if c.get("status") != "ok":
                    out.append(f"FAILED {line.name} {line.op} {n:,} rows: {c.get('error')}")
            if line.fit and line.fit.flagged:
                why = ("the cast key predicate makes every statement scan the table, "
                       "as the study's integer keys did" if line.predicate != INDEX
                       else "a scan per statement or page?")
                out.append(f"SUPERLINEAR {line.name} {line.op}: seconds grow as rows^"
                           f"{line.fit.exponent:.2f} over {line.fit.sizes} sizes: each row "
                           f"costs more as N grows ({why})")
            if line.form:
                forms.setdefault(line.name, line.form)
    out += [f"{name}: {form}" for name, form in forms.items()]
    keys = {str(r["key_form"]) for r in records if r.get("key_form")}
    out += [f"key predicate of the [cast key, no index] lines: {form} (on purpose: the "
            "study bound integer keys to its text key column, and each statement scanned)"
            for form in sorted(keys)]
    fixed = sum(1 for c in records if c.get("unstable") and
                str(c.get("repetition", "")).startswith("fixed"))
    out += unstable_lines(records, "the 95% CI stayed wider than the target" + (
        f" ({fixed} of them fixed repetitions of a large size)" if fixed else ""))
    return out


LONG_COLUMNS = ("target", "db_rtt", "stack", "api", "op", "key_predicate", "rows", "limit",
                "status", "measured_rtt_ms", "round_trips", "floor_s",
                "seconds", "seconds_min", "seconds_max", "ci95_pct", "iterations",
                "repetition", "rows_per_s", "rank", "vs_best", "vs_baseline", "baseline",
                "vs_limit", "exponent", "scaling", "unstable", "error", "api_form")


def long_rows(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One row per (target, stack, api, op, rows): the CSV and JSON shape."""
    for section in sections(records):
        for line in section.lines:
            at_rank = section.ranked_at
            for n in section.sizes:
                c = line.cells.get(n)
                if c is None:
                    continue
                if line.limit and section.predicate != INDEX:
                    continue  # shown again in the cast tables, exported once
                vs_base, vs_limit = size_ratios(section, line, n)
                ref = baseline_for(section, line)
                trips, floor_s = floor(c)
                yield {
                    "target": line.target, "db_rtt": line.path or None,
                    "measured_rtt_ms": (c.get("network") or {}).get("measured_rtt_ms"),
                    "round_trips": trips, "floor_s": floor_s,
                    "stack": "limit" if line.limit else line.stack,
                    "api": line.api, "op": line.op, "key_predicate": line.predicate,
                    "rows": n, "limit": line.limit,
                    "status": c.get("status"), "seconds": c.get("seconds"),
                    "seconds_min": c.get("seconds_min"), "seconds_max": c.get("seconds_max"),
                    "ci95_pct": c.get("ci95_pct"), "iterations": c.get("iterations"),
                    "repetition": c.get("repetition"), "rows_per_s": c.get("rows_per_s"),
                    "rank": line.rank if n == at_rank else None,
                    "vs_best": line.vs_best if n == at_rank else None,
                    "vs_baseline": vs_base, "baseline": ref.name if ref else None,
                    "vs_limit": vs_limit,
                    "exponent": line.fit.exponent if line.fit else None,
                    "scaling": line.fit.label() if line.fit else None,
                    "unstable": bool(c.get("unstable")), "error": c.get("error"),
                    "api_form": line.form,
                }


def build(records: list[dict[str, Any]], title: str) -> model.Report:
    """Per op and target: seconds per batch by size, ranking, scaling; a rows/s chart
    at the largest size."""
    largest: dict[str, int] = {}
    for r in records:
        largest[r["op"]] = max(largest.get(r["op"], 0), int(r.get("rows") or 0))
    blocks: list[Any] = []
    chart_groups: list[tuple[str, list[model.Bar]]] = []
    for section in sections(records):
        anchor = f"batch-{section.op}-{len(blocks)}"
        cols = [model.Column(f"c{i}", name, right)
                for i, (name, right) in enumerate(columns(section))]
        styles: list[str | None] = []
        for line in section.lines:
            style = "limit" if line.limit else ("failed" if line.fit and line.fit.flagged
                                                else None)
            if style is None and any(c.get("unstable") for c in line.cells.values()):
                style = "unstable"
            if any(c.get("status") != "ok" for c in line.cells.values()):
                style = "failed"
            styles.append(style)
        blocks.append(model.Table(f"{section.title}: seconds per batch, COMMIT included "
                                  "(↓ lower is better)", cols,
                                  [{f"c{i}": v for i, v in enumerate(row(section, line))}
                                   for line in section.lines], styles, anchor=anchor))
        blocks.append(model.Table(
            f"rows/s (higher is better) for {section.op}",
            [model.Column("api", "api"), *(model.Column(f"n{n}", f"{n:,} rows", True)
                                           for n in section.sizes)],
            [{"api": line.name, **{f"n{n}": fmt_rate(_rows_per_s(line, n))
                                   for n in section.sizes}} for line in section.lines]))
        if section.baseline is not None or section.limits:
            blocks.append(ratio_table(section, f"{anchor}-ratios"))
        if (sentence := path_sentence(section)) is not None:
            blocks.append(sentence)
        blocks.append(ranking_sentence(section))
        blocks += slowest_first_lines(section)
        n = largest.get(section.op, 0)
        tag = "" if section.predicate == INDEX else f", {section.predicate} key"
        chart_groups.append((f"{section.op} ({n:,} rows{tag})", [
            model.Bar(line.name, rate) for line in section.lines
            if (rate := _rows_per_s(line, n)) is not None
            and not (line.limit and section.predicate != INDEX)]))
    chart = model.BarChart("Rows per second at the largest size", "rows per second (higher is "
                     "better)", chart_groups, anchor="chart-rows",
                     table_anchor=blocks[0].anchor if blocks else "",
                     note="Bars: rows per second of the mean batch time.")
    sections_out = [model.Section("Throughput", [chart]), model.Section("Batches", blocks)]
    if paths := path_table(records):
        sections_out.insert(1, model.Section("Network paths", list(paths)))
    fits = [{"target": s.target, "op": s.op, "name": line.name, "exponent": line.fit.exponent,
             "sizes": line.fit.sizes, "r2": line.fit.r2, "verdict": line.fit.verdict,
             "exponent_low": line.fit.exponent_low, "confident": line.fit.confident}
            for s in sections(records) for line in s.lines if line.fit]
    ranking = {ranking_key(s): {"rows": s.ranked_at,
                                "fastest_first": [line.name for line in s.apis
                                                  if line.rank is not None],
                                "slowest_first_by_rows": {
                                    str(n): [line.name for line in ordered]
                                    for n, ordered in order_by_size(s)}}
               for s in sections(records)}
    networked = any(isinstance(r.get("network"), dict) for r in records)
    return model.Report(title, sections_out, notes=footnotes(records),
                  caption=CAPTION + (NETWORK_CAPTION if networked else ""),
                  data=list(long_rows(records)), data_columns=list(LONG_COLUMNS),
                  extra={"scaling": fits, "ranking": ranking,
                         "superlinear_exponent": SUPERLINEAR_EXPONENT},
                  measurements=measurements(records))


def ranking_key(section: Section) -> str:
    tag = "" if section.predicate == INDEX else f" [{section.predicate}]"
    return f"{section.op} {section.target}{tag}"


def measurements(records: list[dict[str, Any]]) -> list[model.Measurement]:
    """Per case: rows/s, with seconds per batch as the samples."""
    out = []
    for r in records:
        params = r.get("params") or {}
        api, rows = r.get("api") or params.get("api"), r.get("rows") or params.get("rows")
        stack = "limit" if r.get("limit") else r.get("stack")
        tag = "" if predicate_of(r) == INDEX else f" [{predicate_of(r)} key]"
        path = params.get(PATH_PARAM)
        name = (f"batch {stack} {api}{tag} {r.get('op')} {rows} rows on "
                f"{r.get('target_kind')}" + (f", path {path}" if path else ""))
        out.append(model.measurement(r, name, "rows/s", r.get("rows_per_s"),
                                     operation=f"batch of {rows} rows"))
    return out
