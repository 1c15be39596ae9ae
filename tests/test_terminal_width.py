"""Every workload's terminal report read at 100 columns (issue 29): no line wider than
the terminal, no stack or function name broken across lines; what does not fit is
folded into parts that repeat the row names, and the exports keep the whole table.

The results files in tests/data are short real runs (kv and batch on SQLite, webtech
on static-nginx and go-nethttp, docquery on PostgreSQL, parking on SQLite).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from dbstand.report.model import Column, Table
from dbstand.report.renderers.terminal import print_table, row_name_columns
from dbstand.results.store import read_results
from dbstand.workloads.render import build_report

DATA = Path(__file__).resolve().parent / "data"
FILES = {"kv": "kv-sqlite-run.jsonl", "batch": "batch-sqlite-run.jsonl",
         "parking": "parking-sqlite-run.jsonl", "webtech": "webtech-run.jsonl",
         "docquery": "docquery-run.jsonl"}
WIDTH = 100


def names_in(path: Path) -> set[str]:
    """What names the rows of every table of the report (stacks, cases, functions)."""
    names: set[str] = set()
    for table in build_report(read_results(path)).tables():
        columns = [c for c in table.columns if c.compact]
        for col in columns[:row_name_columns(columns)]:
            names.update(row[col.key] for row in table.rows if row.get(col.key))
    return names


def whole(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.parametrize("workload", FILES)
def test_report_reads_at_100_columns(cli, workload: str, tmp_path: Path) -> None:
    path = DATA / FILES[workload]
    res = cli("report", str(path), env={"COLUMNS": str(WIDTH)})
    assert res.code == 0, res.stderr
    wide = [line for line in res.stdout.splitlines() if cell_len(line) > WIDTH]
    assert not wide, wide[:3]
    names = names_in(path)
    assert names
    flat = " ".join(res.stdout.split())  # a legend line may wrap between words
    broken = sorted(n for n in names if not whole(n, res.stdout) and n not in flat)
    assert not broken, broken
    # the export keeps the full table: every compact column of the terminal, unfolded
    md = tmp_path / "r.md"
    assert cli("report", str(path), "-f", "markdown", "-o", str(md)).code == 0
    assert "(1/2)" not in md.read_text()


def test_a_wide_table_folds_with_its_row_names_and_a_legend() -> None:
    names = ["sqlalchemy-orm+psycopg2 with a very long description of the stack", "psycopg"]
    columns = [Column("name", "stack")] + [Column(f"c{i}", f"metric number {i} ↑", True)
                                           for i in range(12)]
    rows = [{"name": n, **{f"c{i}": f"{1000 * i + j:,}.5" for i in range(12)}}
            for j, n in enumerate(names)]
    console = Console(width=60, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_table(Table("wide", columns, rows, caption="the caption"), console)
    text = console.export_text()
    lines = text.splitlines()
    assert all(cell_len(line) <= 60 for line in lines)
    parts = re.findall(r"wide \((\d+)/(\d+)\)", text)
    assert len(parts) >= 2 and parts[-1][0] == parts[-1][1]
    assert text.count("psycopg ") >= len(parts)     # the row name in every part
    assert f"~1 {names[0]}" in " ".join(text.split())  # the long name cut, spelled out below
    for i in range(12):                              # every value, whole, in some part
        assert f"{1000 * i:,}.5" in text and f"{1000 * i + 1:,}.5" in text
    assert text.count("the caption") == 1


def test_prose_wraps_between_words_and_other_columns_stay_whole() -> None:
    """A study's claims table: its reasons run to hundreds of characters. Before prose
    columns existed rich squeezed the other columns to one letter a line to fit them."""
    reason = ("at 4,000 rows execute_batch/prepare+execute_batch (inconclusive: the 95% "
              "interval [0.867, 1.45] holds 1); " * 4).strip()
    columns = [Column("id", "claim", names_row=True), Column("seed", "seed"),
               Column("verdict", "verdict"), Column("reason", "why", prose=True)]
    rows = [{"id": f"insert-order-{i}", "seed": "52x", "verdict": "INCONCLUSIVE",
             "reason": reason} for i in range(3)]
    console = Console(width=WIDTH, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_table(Table("claims", columns, rows), console)
    text = console.export_text()
    assert all(cell_len(line) <= WIDTH for line in text.splitlines())
    assert "(1/" not in text                         # one part: the prose took the rest
    for i in range(3):
        assert re.search(rf"insert-order-{i}\s+52x\s+INCONCLUSIVE", text), text
    words = set(reason.split())
    assert words <= set(text.split()), words - set(text.split())  # no word cut
    assert len([ln for ln in text.splitlines() if "inconclusive:" in ln]) > 3  # it wrapped
