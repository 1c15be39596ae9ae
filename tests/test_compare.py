"""`dbstand compare`: matching cases, significance, and the CI exit code."""

from __future__ import annotations

import json
from pathlib import Path

from dbstand.report.compare import compare, welch
from dbstand.results.store import ResultsWriter, read_results

FAST = ["--rows", "300", "--min-iterations", "5", "--max-iterations", "8", "--ci", "50"]


def write_run(path: Path, times: list[float], revs: int = 1000) -> Path:
    w = ResultsWriter(path)
    w.append({"schema": "dbstand.result/1", "type": "run", "run_id": path.stem,
              "workload": "kv"})
    mean = sum(times) / len(times)
    w.append({"schema": "dbstand.result/1", "type": "case", "status": "ok", "workload": "kv",
              "stack": "sqlite3", "target_kind": "sqlite", "target": f"sqlite:///{path}",
              "mode": "sync", "op": "select", "params": {"rows": 10, "prefix": "x_"},
              "ops_per_s": revs / mean, "iterations": len(times),
              "iteration_s": {"all": times}})
    w.append({"schema": "dbstand.result/1", "type": "run_end", "status": "complete"})
    w.close()
    return path


def test_welch_detects_a_real_shift_and_ignores_noise() -> None:
    base = [1.00, 1.02, 0.98, 1.01, 0.99]
    assert welch(base, [1.20, 1.22, 1.18, 1.21, 1.19])[1] is True
    assert welch(base, [1.01, 0.99, 1.00, 1.02, 0.98])[1] is False


def test_slower_case_is_flagged_and_fails_ci(cli, tmp_path: Path) -> None:
    before = write_run(tmp_path / "before.jsonl", [1.00, 1.02, 0.98, 1.01, 0.99])
    after = write_run(tmp_path / "after.jsonl", [1.30, 1.32, 1.28, 1.31, 1.29])
    rows, only_before, only_after = compare(read_results(before), read_results(after))
    assert len(rows) == 1 and rows[0].verdict == "slower" and rows[0].ratio < 0.8
    assert only_before == only_after == []  # different target URLs still match
    res = cli("compare", str(before), str(after), "--fail-on-regression")
    assert res.code == 1 and "slower" in res.stdout
    assert cli("compare", str(before), str(before), "--fail-on-regression").code == 0


def test_two_real_runs(cli, tmp_path: Path) -> None:
    """In-memory SQLite vs a file with fsync on every commit: inserts get slower."""
    mem, disk = tmp_path / "mem.jsonl", tmp_path / "disk.jsonl"
    assert cli("run", "kv", "--op", "insert,select", "--revs", "300", "-o", str(mem),
               *FAST).code == 0
    url = f"sqlite:///{tmp_path / 'f.db'}?journal_mode=delete&synchronous=full"
    assert cli("run", "kv", "--target", url, "--op", "insert", "--revs", "300",
               "-o", str(disk), *FAST).code == 0
    res = cli("compare", str(mem), str(disk), "--format", "json")
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    (insert,) = data["comparisons"]
    assert insert["label"].startswith("kv sqlite3 insert")
    assert insert["ratio"] < 1
    assert data["only_before"] == ["kv sqlite3 select [sync]"]
