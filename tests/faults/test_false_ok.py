"""No false ok (issue 28 item 7): a check on a figure the runs do not have, a
non-finite threshold, a torn results file, a study's claims on another workload's
file, and a stack pointed at a database its manifest does not list are each refused
or warned about, never judged as passing."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.faults.helpers import one_error_line, run_tagged
from tests.test_compare import write_run

PARKING = Path(__file__).parent.parent / "data" / "parking-sqlite-run.jsonl"
TIMES = [1.00, 1.02, 0.98, 1.01, 0.99]


def test_a_check_on_a_figure_the_runs_do_not_have_is_an_error(tmp_path: Path) -> None:
    base = write_run(tmp_path / "a.jsonl", TIMES)
    new = write_run(tmp_path / "b.jsonl", TIMES)
    result, _ = run_tagged("compare", str(base), str(new), "--check", "passes/s>5")
    assert result.code == 2
    assert one_error_line(result).endswith(
        "--check 'passes/s>5': the kv runs' cases are measured in ops/s, not passes/s "
        "(name that figure, or 'value')")
    ok, _ = run_tagged("compare", str(base), str(new), "--check", "ops/s>5")
    assert ok.code == 0, ok.stderr


def test_a_non_finite_threshold_is_refused(tmp_path: Path) -> None:
    base = write_run(tmp_path / "a.jsonl", TIMES)
    slower = write_run(tmp_path / "b.jsonl", [t * 1.8 for t in TIMES])
    for value in ("nan", "inf"):
        result, _ = run_tagged("compare", str(base), str(slower), "--threshold", value,
                               "--fail-on-regression")
        assert result.code == 2
        assert "--threshold must be a finite number" in one_error_line(result)


def test_compare_warns_of_a_torn_last_line(tmp_path: Path) -> None:
    base = write_run(tmp_path / "a.jsonl", TIMES)
    torn = write_run(tmp_path / "b.jsonl", TIMES)
    torn.write_text(torn.read_text() + '{"schema": "dbstand.result/1", "ty')
    result, _ = run_tagged("compare", str(base), str(torn))
    assert result.code == 0, result.stderr
    assert f"warning: {torn}: line 4 is torn (crash while writing): ignored" in result.stderr


def test_a_study_refuses_a_results_file_of_another_workload(tmp_path: Path) -> None:
    shutil.copy(PARKING, tmp_path / "p.jsonl")
    result, _ = run_tagged("study", "webtech", "--results", "p.jsonl", cwd=tmp_path)
    assert result.code == 2
    assert one_error_line(result).endswith(
        "--results p.jsonl is a parking run, not a webtech run of the webtech study: its "
        "claims cannot be checked on it")


def test_a_stack_is_refused_a_database_its_manifest_does_not_list(tmp_path: Path) -> None:
    result, _ = run_tagged("stack", "check", "go-nethttp", "--target", "sqlite:///x.db",
                           cwd=tmp_path)
    assert result.code == 2
    assert one_error_line(result).endswith("this stack runs on mysql, not sqlite: its "
                                           "manifest says so")
    assert not (tmp_path / "x.db").exists()
    static, _ = run_tagged("stack", "check", "static-nginx", "--target", "sqlite:///x.db",
                           cwd=tmp_path)
    assert static.code == 2
    assert "reads no database (drop --target)" in one_error_line(static)
