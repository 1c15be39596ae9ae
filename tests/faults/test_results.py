"""Results output: checked before anything is measured, written as cases end, never
torn, never lost silently; files of another schema refused (issue 17, items 5, 8, 9)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dbstand.errors import UserError
from dbstand.results.schema import SCHEMA
from dbstand.results.store import read_results

from .helpers import need_root_mount, one_error_line, orphans, run_tagged, tmpfs

KV_QUICK = ["run", "kv", "--revs", "300", "--rows", "300", "--min-iterations", "2",
            "--max-iterations", "3"]


def _no_leftovers(folder: Path) -> None:
    leftovers = [p.name for p in folder.iterdir()
                 if p.name.endswith(".tmp") or (p.suffix == ".jsonl" and p.stat().st_size == 0)]
    assert leftovers == [], leftovers


def test_read_only_results_folder_is_one_line_before_measuring(tmp_path: Path) -> None:
    need_root_mount()
    with tmpfs(tmp_path / "ro", "ro,size=64k") as folder:
        result, tag = run_tagged(*KV_QUICK, "--op", "select", "-o", str(folder / "r.jsonl"),
                                 cwd=tmp_path)
        assert result.code == 2
        line = one_error_line(result)
        assert "cannot create results file" in line and "Read-only file system" in line
        assert list(folder.iterdir()) == []
    assert "ops/s" not in result.stdout  # nothing was measured
    assert orphans(tag) == []


def test_results_under_a_file_is_one_line(tmp_path: Path) -> None:
    """A results path whose folder is a file (works as any user)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result, _ = run_tagged(*KV_QUICK, "--op", "select", "-o", str(blocker / "r.jsonl"),
                           cwd=tmp_path)
    assert result.code == 2
    assert "cannot create the results folder" in one_error_line(result)


def test_full_disk_before_the_first_record(tmp_path: Path) -> None:
    """No byte free: refused before measuring, and no empty .jsonl or .tmp is left."""
    need_root_mount()
    with tmpfs(tmp_path / "full", "size=4k") as folder:
        (folder / "filler").write_bytes(b"x" * 4096)
        result, tag = run_tagged(*KV_QUICK, "--op", "select", "-o", str(folder / "r.jsonl"),
                                 cwd=tmp_path)
        assert result.code == 2
        line = one_error_line(result)
        assert "No space left on device" in line and "0 record(s) saved" in line
        assert sorted(p.name for p in folder.iterdir()) == ["filler"]
    assert orphans(tag) == []


def test_full_disk_mid_run_keeps_every_measurement(tmp_path: Path) -> None:
    """Room for the run record and little more: the file keeps whole records only, the
    case that did not fit is saved elsewhere and the error says where; the run stops."""
    need_root_mount()
    with tmpfs(tmp_path / "full", "size=8k") as folder:
        (folder / "filler").write_bytes(b"x" * 4096)
        out = folder / "r.jsonl"
        result, tag = run_tagged(*KV_QUICK, "--op", "select,insert,update", "-o", str(out),
                                 cwd=tmp_path)
        assert result.code == 2
        line = one_error_line(result)
        assert "No space left on device" in line and "was saved to " in line
        saved = Path(line.split("was saved to ", 1)[1].split(";", 1)[0].strip())
        try:
            rescued = [json.loads(x) for x in saved.read_text().splitlines()]
        finally:
            saved.unlink()
        assert [r["type"] for r in rescued] == ["case"] and rescued[0]["status"] == "ok"
        assert rescued[0]["ops_per_s"] > 0
        kept = read_results(out)  # whole records only: no torn line
        assert kept.warnings == [] and kept.header is not None and kept.footer is None
        assert rescued[0]["case_index"] == len(kept.cases)
        _no_leftovers(folder)
    assert orphans(tag) == []


def test_report_of_a_folder_is_one_line(tmp_path: Path) -> None:
    result, _ = run_tagged("report", str(tmp_path))
    assert result.code == 2
    assert "is a folder" in one_error_line(result)


def test_results_of_another_schema_version_are_refused(tmp_path: Path) -> None:
    newer = SCHEMA.split("/")[0] + "/2"
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"schema": newer, "type": "run", "run_id": "x",
                                "workload": "kv"}) + "\n")
    with pytest.raises(UserError, match=f"written in results schema {newer}"):
        read_results(path)
    result, _ = run_tagged("report", str(path))
    assert result.code == 2 and newer in one_error_line(result)


def test_read_results_exposes_the_workload(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"schema": SCHEMA, "type": "run", "run_id": "x",
                                "workload": "http"}) + "\n")
    assert read_results(path).workload == "http"
    bare = tmp_path / "cases.jsonl"
    bare.write_text(json.dumps({"schema": SCHEMA, "type": "case", "workload": "kv"}) + "\n")
    assert read_results(bare).workload == "kv"


def test_binary_file_is_not_a_results_file(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(os.urandom(64) + b"\xff\xfe")
    with pytest.raises(UserError, match="not a dbstand results file"):
        read_results(path)
