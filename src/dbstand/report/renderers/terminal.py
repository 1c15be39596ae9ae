"""The terminal: rich tables with the compact columns, then notes and flags.

A table wider than the terminal is folded, never squeezed: rich would otherwise wrap
a stack's name letter by letter or drop columns to fit. The columns that name a row
(`Column.names_row`, or the leading text columns) are repeated in each part and the
others are dealt into as many parts as the width needs; a row name too long for its
share is cut with a mark and spelled out in a legend under the table. Every cell keeps
its whole text on one line, except prose columns (`Column.prose`: a verdict's reason),
which wrap between words and take the width the others leave; headers wrap between
words. Exports keep the full table.
"""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table as RichTable

from dbstand.report.model import Column, Report, Table

STYLES = {"failed": "red", "unstable": "yellow", "limit": "cyan"}
#: the row-naming columns may take at most this share of the width before long names
#: are cut (with a legend)
NAME_SHARE = 0.45
#: a cut name keeps at least this many characters
MIN_NAME = 10
#: a prose column is at least this wide (or its longest word, or its whole text)
MIN_PROSE = 24


def row_name_columns(columns: list[Column]) -> int:
    """How many leading columns name a row: the marked ones, else the leading text
    columns (at least one)."""
    marked = sum(1 for c in columns if c.names_row)
    if marked:
        return marked
    count = 0
    for col in columns:
        if col.numeric:
            break
        count += 1
    return max(1, min(count, len(columns) - 1)) if len(columns) > 1 else len(columns)


def _rich(title: str, caption: str, columns: list[Column], rows: list[list[str]],
          widths: list[int], styles: list[str | None]) -> RichTable:
    """Columns of fixed widths: rich's own fitting squeezes whole cells."""
    out = RichTable(title=title, header_style="bold", caption=caption or None,
                    box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col, width in zip(columns, widths, strict=True):
        out.add_column(col.title, justify="right" if col.numeric else "left",
                       width=width, overflow="fold")
    for row, style in zip(rows, styles, strict=True):
        # escape: `tarantool[sql]` is a stack label, not rich markup
        out.add_row(*(escape(c) for c in row), style=STYLES.get(style or ""))
    return out


class _Cells:
    """A table's compact cells, with long row names cut to a per-column cap; each cut
    name ends in a mark (~1, ~2...) that the legend spells out."""

    def __init__(self, table: Table, columns: list[Column]):
        self.columns = columns
        self.full = [[row.get(c.key, "") for c in columns] for row in table.rows]
        self.styles = [table.style(i) for i in range(len(table.rows))]
        self.caps: dict[int, int] = {}
        self.marks: dict[str, str] = {}

    def cell(self, row: int, col: int) -> str:
        value = self.full[row][col]
        cap = self.caps.get(col)
        if cap is None or cell_len(value) <= cap:
            return value
        mark = self.marks.setdefault(value, f"~{len(self.marks) + 1}")
        return value[:max(1, cap - len(mark) - 1)] + "…" + mark

    def longest(self, col: int) -> int:
        return max([0] + [cell_len(self.cell(r, col)) for r in range(len(self.full))])

    def need(self, col: int) -> int:
        """The narrowest the column can be: its widest cell whole (a prose column: its
        longest word, at least MIN_PROSE unless all its text is shorter), its longest
        header word."""
        words = self.columns[col].title.split() or [""]
        if self.columns[col].prose:
            cells = [min(self.longest(col), MIN_PROSE)] + [
                cell_len(w) for r in range(len(self.full)) for w in self.cell(r, col).split()]
        else:
            cells = [self.longest(col)]
        return max([cell_len(w) for w in words] + cells)

    def build(self, idx: list[int], title: str = "", caption: str = "",
              spare: int = 0) -> RichTable:
        """The columns `idx` at their narrowest, plus `spare` characters given to
        headers that would wrap (left to right, up to their whole title)."""
        widths = [self.need(i) for i in idx]
        for n, i in enumerate(idx):  # prose first: it wraps less the wider it is
            if self.columns[i].prose:
                grow = min(spare, self.longest(i) - widths[n])
                if grow > 0:
                    widths[n] += grow
                    spare -= grow
        for n, i in enumerate(idx):
            grow = min(spare, cell_len(self.columns[i].title) - widths[n])
            if grow > 0:
                widths[n] += grow
                spare -= grow
        return _rich(title, caption, [self.columns[i] for i in idx],
                     [[self.cell(r, i) for i in idx] for r in range(len(self.full))],
                     widths, self.styles)

    def renumber(self) -> None:
        """Marks in reading order (row by row), whatever order measuring gave them."""
        self.marks.clear()
        for r in range(len(self.full)):
            for c in self.caps:
                self.cell(r, c)

    def legend(self) -> list[str]:
        return [f"{mark} {name}" for name, mark in self.marks.items()]


def _fold(table: Table, width: int, console: Console) -> tuple[list[RichTable], list[str]]:
    """The table as parts that each fit `width`, and the legend of cut names."""
    columns = [c for c in table.columns if c.compact]
    cells = _Cells(table, columns)
    unbounded = console.options.update_width(10_000)  # measure, don't clamp to the screen

    def wide(idx: list[int]) -> int:
        return Measurement.get(console, unbounded, cells.build(idx)).minimum

    whole = list(range(len(columns)))
    if not columns or wide(whole) <= width:
        return [cells.build(whole, table.title, table.caption, width - wide(whole))], []
    names = row_name_columns(columns)
    head = list(range(names))
    budget = int(width * NAME_SHARE)
    while wide(head) > budget or (names < len(columns) and wide([*head, names]) > width):
        widest = max(head, key=cells.need)
        cap = cells.need(widest) - 1
        if cap < MIN_NAME:
            break
        cells.caps[widest] = cap
    cells.renumber()
    parts: list[list[int]] = []
    for i in range(names, len(columns)):
        if parts and wide(head + parts[-1] + [i]) <= width:
            parts[-1].append(i)
        else:
            parts.append([i])
    total = len(parts)
    out = [cells.build(head + part,
                       f"{table.title} ({n}/{total})" if total > 1 else table.title,
                       table.caption if n == total else "", width - wide(head + part))
           for n, part in enumerate(parts, 1)] or [cells.build(head, table.title,
                                                                table.caption)]
    return out, cells.legend()


def print_table(table: Table, console: Console) -> None:
    """One table, folded into parts when the console is narrower than the table."""
    parts, legend = _fold(table, console.width, console)
    for part in parts:
        console.print(part)
    for line in legend:
        console.print(escape(line), highlight=False, style="dim")


def print_report(report: Report, console: Console) -> None:
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Table):
                print_table(block, console)
            elif isinstance(block, str):
                console.print(escape(block), highlight=False)
    for line in report.notes:
        console.print(escape(line), highlight=False)
    if report.caption:
        console.print(escape(report.caption), style="dim", highlight=False)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if not report.complete:
        console.print(f"[yellow]note:[/] this run is {report.status}")


def render(report: Report) -> str:
    console = Console(width=160, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_report(report, console)
    return console.export_text()
