"""The scaling verdict: the fit itself, and a deliberately superlinear path flagged on
real SQLite; a wrong batch is caught by the verification."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from dbstand.engine.config import EngineConfig
from dbstand.targets.url import parse_target_url
from dbstand.workloads import get_workload
from dbstand.workloads.batch.adapters.sqlite3 import Sqlite3Batch
from dbstand.workloads.batch.api import BatchApi, BatchData
from dbstand.workloads.batch.scaling import SUPERLINEAR_EXPONENT, fit_power_law, scaling
from dbstand.workloads.batch.workload import BatchOptions, build_cases
from dbstand.workloads.catalog import STACKS, StackSpec
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.render import render, render_terminal


def test_fit_recovers_the_exponent() -> None:
    for b in (0.5, 1.0, 2.0):
        fit = scaling([(n, 3e-6 * n ** b) for n in (1_000, 10_000, 100_000)])
        assert fit is not None and math.isclose(fit.exponent, b, abs_tol=1e-9)
        assert fit.r2 == 1.0 and fit.confident
    assert scaling([(1000, 1.0), (2000, 2.0)]).verdict == "linear"  # type: ignore[union-attr]
    assert scaling([(1000, 1.0), (2000, 2.0)]).confident is False  # type: ignore[union-attr]
    assert scaling([(1000, 1.0), (1000, 1.1)]) is None  # one size: nothing to fit
    assert fit_power_law([]) is None


def test_noise_alone_is_not_flagged() -> None:
    """Means bent upward by one slow run, but the runs' spread overlaps linear growth."""
    fit = scaling([(1000, 1.0, 0.9, 1.2), (2000, 2.0, 1.8, 2.3), (4000, 8.0, 3.9, 20.0)])
    assert fit is not None and fit.exponent > SUPERLINEAR_EXPONENT
    assert fit.verdict == "superlinear?" and not fit.flagged
    assert fit.exponent_low < 1.0


def test_spread_must_clear_the_threshold_not_just_linear() -> None:
    """A linear path of ~1 ms batches with one preempted run at the largest size: the
    means fit above the threshold and the favourable reading beats 1.0, as a linear
    path's does about half the time; the spread does not put it beyond 1.3."""
    fit = scaling([(1000, 2.3e-3, 2.25e-3, 2.35e-3), (2000, 5.0e-3, 4.7e-3, 5.6e-3),
                   (4000, 15e-3, 10e-3, 30e-3)])
    assert fit is not None and fit.exponent > SUPERLINEAR_EXPONENT
    assert 1.0 < fit.exponent_low < SUPERLINEAR_EXPONENT
    assert fit.verdict == "superlinear?" and not fit.flagged


def test_the_study_shape_is_flagged() -> None:
    """The study's execute_values update: 0.356 s, 5.237 s, 21.102 s for 10k, 50k, 100k."""
    fit = scaling([(10_000, 0.356), (50_000, 5.237), (100_000, 21.102)])
    assert fit is not None and fit.exponent > SUPERLINEAR_EXPONENT and fit.flagged
    insert = scaling([(10_000, 0.266), (50_000, 1.226), (100_000, 2.125)])
    assert insert is not None and insert.verdict == "linear" and not insert.flagged


class UnindexedDelete(Sqlite3Batch):
    """Test-only: one DELETE per row by the unindexed value column, so each statement
    scans the table: cost grows as rows^2."""

    apis = (*Sqlite3Batch.apis,
            BatchApi("delete_by_value", ("delete",), "test only: DELETE ... WHERE f_value = ?"))

    def api_delete_by_value(self, op: str, data: BatchData) -> None:
        sql = f"DELETE FROM {self.table} WHERE f_value = ?"
        for (key,) in data.row_params:
            self.cur.execute(sql, (int(key),))


class HalfInsert(Sqlite3Batch):
    """Test-only: an api that silently inserts only half the rows."""

    apis = (*Sqlite3Batch.apis, BatchApi("half", ("insert",), "test only: loses rows"))

    def api_half(self, op: str, data: BatchData) -> None:
        self.cur.executemany(f"INSERT INTO {self.table} VALUES (?, ?)",
                             data.row_params[: data.rows // 2])


@pytest.fixture
def test_stacks(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, cls in (("sqlite3-unindexed", "UnindexedDelete"), ("sqlite3-half", "HalfInsert")):
        monkeypatch.setitem(STACKS, name, StackSpec(
            name, ("sqlite",), ("sqlite3",), ("sqlite3",), {"batch": f"{__name__}:{cls}"},
            "test only"))


def run(tmp_path: Path, stack: str, apis: list[str], ops: list[str], rows: list[int],
        name: str = "r"):
    target = parse_target_url("sqlite://")  # in memory: the least noisy real SQLite
    cases = build_cases([target], [stack], apis, ops, rows, BatchOptions(), limits=False)
    config = EngineConfig(revs=1, min_iterations=3, max_iterations=6, target_ci_pct=10)
    return execute(RunRequest(get_workload("batch"), cases, config,
                              tmp_path / f"{name}.jsonl", ["test"]),
                   Console(file=io.StringIO()))


def scaling_of(results) -> dict[str, dict]:
    return {s["name"]: s for s in json.loads(render(results, "json"))["scaling"]}


def terminal_text(results) -> str:
    console = Console(record=True, width=220, file=io.StringIO())
    render_terminal(results, console)
    return console.export_text()


@pytest.mark.exclusive  # the fitted exponent of measured times: a busy second worker blurs it
def test_superlinear_path_is_flagged(tmp_path: Path, test_stacks: None) -> None:
    """Each path spans a wide range of sizes, because the machine can slow a whole case
    (every run of one size) by up to ~1.7x here, which no run-to-run spread shows: over
    a 16x range that bends a linear fit by at most log(1.7)/log(16) ~ 0.19, below the
    threshold, and over 8x a quadratic path's favourable reading stays above it."""
    quadratic = run(tmp_path, "sqlite3-unindexed", ["delete_by_value"], ["delete"],
                    [1000, 3000, 8000], "quadratic")
    by_key = run(tmp_path, "sqlite3-unindexed", ["executemany"], ["delete"],
                 [1000, 4000, 16000], "by_key")
    assert all(r["status"] == "ok" for r in quadratic.cases + by_key.cases)
    slow = scaling_of(quadratic)["sqlite3-unindexed delete_by_value"]
    assert slow["exponent"] > SUPERLINEAR_EXPONENT and slow["verdict"] == "superlinear", slow
    assert slow["confident"] and slow["sizes"] == 3
    # the same deletes by primary key are not flagged
    fast = scaling_of(by_key)["sqlite3-unindexed executemany"]
    assert fast["verdict"] != "superlinear" and fast["sizes"] == 3, fast
    assert "SUPERLINEAR sqlite3-unindexed delete_by_value delete" in terminal_text(quadratic)
    assert "SUPERLINEAR sqlite3-unindexed executemany" not in terminal_text(by_key)


def test_wrong_batch_is_caught(tmp_path: Path, test_stacks: None) -> None:
    results = run(tmp_path, "sqlite3-half", ["half"], ["insert"], [100])
    [record] = results.cases
    assert record["status"] == "failed"
    assert "the table has 50 rows, expected 100" in record["error"]
    assert results.footer is not None and results.footer["failed"] == 1
