"""`dbstand compare`: matching cases, the change with its interval, Welch's test, the
CI gate (regressions, failed or missing cases, --check), environments, workloads.

Regressions are planted in the data: a copy of a real run's results file whose
iteration times are scaled, so the expected verdict is known exactly."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dbstand.errors import UserError
from dbstand.report.compare import parse_check, t_quantile, t_two_sided_p, welch
from dbstand.results.store import ResultsWriter, read_results
from dbstand.workloads.render import build_report

FAST = ["--rows", "300", "--min-iterations", "5", "--max-iterations", "8", "--ci", "50"]
ENV = {"cpu_model": "Test CPU", "cpu_logical": 2, "os": "Linux-6.1-x86_64-with-glibc2.36",
       "python": "CPython 3.11.7", "packages": {"sqlite3": "builtin"}, "server": {}}


def write_run(path: Path, times: list[float], revs: int = 1000, workload: str = "kv",
              env: dict[str, Any] | None = None) -> Path:
    w = ResultsWriter(path)
    w.append({"schema": "dbstand.result/1", "type": "run", "run_id": path.stem,
              "workload": workload})
    mean = sum(times) / len(times)
    w.append({"schema": "dbstand.result/1", "type": "case", "status": "ok",
              "workload": workload, "stack": "sqlite3", "target_kind": "sqlite",
              "target": f"sqlite:///{path}", "mode": "sync", "op": "select",
              "params": {"rows": 10, "prefix": "x_"}, "ops_per_s": revs / mean, "revs": revs,
              "iterations": len(times), "iteration_s": {"all": times},
              "latency_us": {"p50": 900.0, "p99": 1500.0}, "environment": env or ENV})
    w.append({"schema": "dbstand.result/1", "type": "run_end", "status": "complete"})
    w.close()
    return path


def rewrite(src: Path, dst: Path, change: Callable[[dict[str, Any]], dict[str, Any] | None]
            ) -> Path:
    """A copy of a results file with each case record passed through `change` (None
    drops the case)."""
    lines = []
    for record in map(json.loads, src.read_text().splitlines()):
        if record["type"] == "case":
            record = change(record)
            if record is None:
                continue
        lines.append(json.dumps(record))
    dst.write_text("\n".join(lines) + "\n")
    return dst


def slower(record: dict[str, Any]) -> dict[str, Any]:
    """A planted regression: every iteration takes twice the slowest one's time longer,
    as a fixed extra wait per iteration would. Shifting the times (not scaling them)
    keeps the run's own spread, so the change stays far outside the noise even when a
    loaded machine gave one iteration a long stall."""
    times = record["iteration_s"]["all"]
    extra = 2 * max(times)
    record["iteration_s"]["all"] = [t + extra for t in times]
    record["ops_per_s"] = record["revs"] * len(times) / sum(record["iteration_s"]["all"])
    return record


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real kv run (select, update) on in-memory SQLite."""
    from conftest import run_cli

    out = tmp_path_factory.mktemp("compare") / "base.jsonl"
    res = run_cli("run", "kv", "--op", "select,update", "--revs", "300", "-o", str(out), *FAST,
                  env={"DBSTAND_HOME": str(tmp_path_factory.mktemp("home"))})
    assert res.code == 0, res.stderr
    return out


# --- statistics ---------------------------------------------------------------------
def test_t_distribution() -> None:
    assert t_two_sided_p(2.776, 4) == pytest.approx(0.05, abs=2e-4)
    assert t_two_sided_p(0.0, 7) == pytest.approx(1.0)
    assert t_quantile(0.05, 10) == pytest.approx(2.228, abs=1e-3)
    assert t_quantile(0.05, 1e6) == pytest.approx(1.960, abs=1e-3)


def test_welch_detects_a_real_shift_and_ignores_noise() -> None:
    base = [1.00, 1.02, 0.98, 1.01, 0.99]
    shifted = welch(base, [1.20, 1.22, 1.18, 1.21, 1.19])
    assert shifted is not None and shifted.significant and shifted.low <= 0.2 <= shifted.high
    noise = welch(base, [1.01, 0.99, 1.00, 1.02, 0.98])
    assert noise is not None and not noise.significant and noise.low < 0 < noise.high
    assert welch([1.0], [2.0, 2.1]) is None  # one sample: no variance, no test


def test_checks_parse() -> None:
    p99 = parse_check("p99<5ms")
    assert (p99.metric, p99.op, p99.bound, p99.relative) == ("p99", "<", 5000.0, False)
    ops = parse_check("ops/s>-5%")
    assert (ops.metric, ops.bound, ops.relative) == ("figure", -5.0, True)
    assert parse_check("p99.9 <= 250 us").metric == "p999"
    for bad in ("p99<5", "latency<5ms", "ops/s>5ms", "p99 5ms"):
        with pytest.raises(UserError):
            parse_check(bad)


# --- synthetic files: exact verdicts -------------------------------------------------
def test_slower_case_is_flagged_with_its_interval(cli, tmp_path: Path) -> None:
    before = write_run(tmp_path / "before.jsonl", [1.00, 1.02, 0.98, 1.01, 0.99])
    after = write_run(tmp_path / "after.jsonl", [1.30, 1.32, 1.28, 1.31, 1.29])
    res = cli("compare", str(before), str(after), "--format", "json")
    assert res.code == 0, res.stderr  # no gate asked: informational
    (c,) = json.loads(res.stdout)["comparisons"]
    assert c["verdict"] == "slower" and c["ratio"] < 0.8 and c["significant"]
    assert c["ci_low_pct"] < c["change_pct"] < c["ci_high_pct"] < 0
    assert c["p_value"] < 0.001
    res = cli("compare", str(before), str(after), "--fail-on-regression")
    assert res.code == 1 and "slower" in res.stdout and "REGRESSION" in res.stdout
    assert cli("compare", str(before), str(before), "--fail-on-regression").code == 0


def test_a_change_inside_the_noise_is_not_a_regression(cli, tmp_path: Path) -> None:
    before = write_run(tmp_path / "a.jsonl", [1.0, 1.2, 0.8, 1.1, 0.9])
    after = write_run(tmp_path / "b.jsonl", [1.05, 1.25, 0.85, 1.15, 0.95])  # 5% slower
    res = cli("compare", str(before), str(after), "--check", "ops/s>-1%", "-f", "json")
    assert res.code == 0, res.stdout + res.stderr
    data = json.loads(res.stdout)
    (c,) = data["comparisons"]
    assert c["verdict"] == "no change" and not c["significant"]
    assert c["ci_low_pct"] < 0 < c["ci_high_pct"]
    (check,) = data["checks"]
    assert check["passed"] and "noise" in check["detail"]
    assert cli("compare", str(before), str(after), "--fail-on-regression",
               "--threshold", "1").code == 0


def test_environments_must_match_unless_forced(cli, tmp_path: Path) -> None:
    before = write_run(tmp_path / "a.jsonl", [1.0, 1.01, 0.99])
    other = write_run(tmp_path / "b.jsonl", [1.0, 1.01, 0.99],
                      env={**ENV, "cpu_model": "Other CPU", "python": "CPython 3.12.1"})
    res = cli("compare", str(before), str(other))
    assert res.code == 2 and "different environments" in res.stderr
    assert "cpu_model" in res.stderr and "python" in res.stderr and "--force" in res.stderr
    res = cli("compare", str(before), str(other), "--force", "--fail-on-regression")
    assert res.code == 0, res.stderr
    assert "environments differ" in res.stdout


def test_different_workloads_are_refused(cli, tmp_path: Path) -> None:
    kv = write_run(tmp_path / "kv.jsonl", [1.0, 1.01, 0.99])
    http = write_run(tmp_path / "http.jsonl", [1.0, 1.01, 0.99], workload="http")
    res = cli("compare", str(kv), str(http), "--force")
    assert res.code == 2 and "workloads differ" in res.stderr
    assert "kv run" in res.stderr and "http run" in res.stderr


# --- real runs -------------------------------------------------------------------------
def test_planted_regression_fails_the_gate(cli, real_run: Path, tmp_path: Path) -> None:
    slow = rewrite(real_run, tmp_path / "slow.jsonl", slower)
    res = cli("compare", str(real_run), str(slow), "--fail-on-regression")
    assert res.code == 1, res.stdout
    assert res.stdout.count("REGRESSION") == 2
    assert cli("compare", str(real_run), str(real_run), "--fail-on-regression").code == 0
    # the same data through the library: both cases slower, by two thirds or more
    result = build_report(read_results(slow))
    assert {m.name for m in result.measurements} == {"kv sqlite3 select [sync]",
                                                     "kv sqlite3 update [sync]"}
    js = json.loads(cli("compare", str(real_run), str(slow), "-f", "json").stdout)
    for c in js["comparisons"]:
        assert c["verdict"] == "slower" and c["change_pct"] <= -66
        assert c["ci_high_pct"] < 0 and c["p_value"] < 0.05


def test_failed_or_missing_case_fails_the_gate(cli, real_run: Path, tmp_path: Path) -> None:
    def fail_update(r: dict[str, Any]) -> dict[str, Any]:
        if r["op"] == "update":
            r.update(status="failed", error="planted failure")
        return r

    failed = rewrite(real_run, tmp_path / "failed.jsonl", fail_update)
    res = cli("compare", str(real_run), str(failed), "--fail-on-regression")
    assert res.code == 1 and "FAILED in the new run: kv sqlite3 update [sync]" in res.stdout
    assert cli("compare", str(real_run), str(failed)).code == 0  # no gate: a report only
    missing = rewrite(real_run, tmp_path / "missing.jsonl",
                      lambda r: None if r["op"] == "update" else r)
    res = cli("compare", str(real_run), str(missing), "--check", "p99<10s")
    assert res.code == 1 and "MISSING from the new run: kv sqlite3 update [sync]" in res.stdout


def test_checks_gate(cli, real_run: Path, tmp_path: Path) -> None:
    same = cli("compare", str(real_run), str(real_run), "--check", "p99<10s",
               "--check", "ops/s>-5%")
    assert same.code == 0, same.stdout
    assert "checks: 4 of 4 passed" in same.stdout
    tight = cli("compare", str(real_run), str(real_run), "--check", "p50<1ns")
    assert tight.code == 1 and "CHECK p50<1ns failed" in tight.stdout
    slow = rewrite(real_run, tmp_path / "slow.jsonl", slower)
    res = cli("compare", str(real_run), str(slow), "--check", "ops/s>-5%")
    assert res.code == 1 and res.stdout.count("CHECK ops/s>-5% failed") == 2
    # a bound the regression stays within passes
    assert cli("compare", str(real_run), str(slow), "--check", "ops/s>-99%").code == 0


def test_several_new_runs_and_markdown(cli, real_run: Path, tmp_path: Path) -> None:
    slow = rewrite(real_run, tmp_path / "slow.jsonl", slower)
    res = cli("compare", str(real_run), str(real_run), str(slow), "-f", "markdown",
              "--fail-on-regression")
    assert res.code == 1
    assert res.stdout.count("| case | baseline | new | change | 95% CI | p | verdict |") == 2
    assert "| **slower" in res.stdout  # bold, "(unstable)" may follow
    js = json.loads(cli("compare", str(real_run), str(real_run), str(slow), "-f", "json").stdout)
    assert [len(run["comparisons"]) for run in js["runs"]] == [2, 2]


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
    # the select case is missing from the fsync run: a gate fails on it
    assert cli("compare", str(mem), str(disk), "--fail-on-regression").code == 1
