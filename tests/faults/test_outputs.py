"""Outputs never destroy anything (issue 28 item 1): a device, FIFO or symlink named as
an output is written through or refused, never replaced; an output naming the run's
own results file, or another output, is refused before anything is measured."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from tests.faults.helpers import one_error_line, run_tagged

DATA = Path(__file__).parent.parent / "data" / "parking-sqlite-run.jsonl"
FAST_KV = ["run", "kv", "--stack", "sqlite3", "--op", "select", "--revs", "300", "--rows", "500",
           "--min-iterations", "3", "--max-iterations", "5"]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "r.jsonl"
    shutil.copy(DATA, path)
    return path


def test_a_full_device_is_written_through_not_replaced(tmp_path: Path, results: Path) -> None:
    """A device node like /dev/full (made here, root only) stays a device: ENOSPC."""
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers
    result, _ = run_tagged("report", str(results), "-f", "html", "-o", str(full))
    assert result.code == 2
    assert one_error_line(result).endswith(f"cannot write {full}: No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode)


def test_a_fifo_with_a_reader_gets_the_report(tmp_path: Path, results: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result, _ = run_tagged("report", str(results), "-f", "csv", "-o", str(fifo))
    reader.join(10)
    assert result.code == 0, result.stderr
    printed, _ = run_tagged("report", str(results), "-f", "csv")
    assert [g.decode().replace("\r\n", "\n") for g in got] == [printed.stdout]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_nobody_reads_is_refused_not_replaced(tmp_path: Path, results: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result, _ = run_tagged("report", str(results), "-f", "csv", "-o", str(fifo), timeout=30)
    assert result.code == 2
    assert "nothing read from it within 3 s" in one_error_line(result)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_symlink_stays_a_symlink(tmp_path: Path, results: Path) -> None:
    (tmp_path / "real.csv").write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to("real.csv")
    result, _ = run_tagged("report", str(results), "-f", "csv", "-o", str(link))
    assert result.code == 0, result.stderr
    assert link.is_symlink()
    assert (tmp_path / "real.csv").read_text() != "old\n"


@pytest.mark.parametrize("args", [
    ["-f", "csv", "-o", "r.jsonl"],
    ["--export", "json=./r.jsonl"],
    ["-f", "csv", "-o", "x.csv", "--export", "csv=x.csv"],
    ["--export", "csv=x.csv", "--export", "json=sub/../x.csv"],
], ids=["output-is-input", "export-is-input", "output-is-export", "two-exports"])
def test_report_outputs_naming_one_file_are_refused(tmp_path: Path, results: Path,
                                                    args: list[str]) -> None:
    before = results.read_bytes()
    (tmp_path / "sub").mkdir()
    result, _ = run_tagged("report", "r.jsonl", *args, cwd=tmp_path)
    assert result.code == 2
    assert "names the same file as" in one_error_line(result)
    assert results.read_bytes() == before
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("args", [
    ["-o", "a.jsonl", "--export", "json=a.jsonl"],
    ["-o", "a.jsonl", "--html", "a.jsonl"],
    ["-o", "a.jsonl", "--export", "csv=b.csv", "--export", "json=b.csv"],
], ids=["export", "html", "two-exports"])
def test_a_run_refuses_outputs_naming_one_file_before_measuring(tmp_path: Path,
                                                                args: list[str]) -> None:
    result, _ = run_tagged(*FAST_KV, *args, cwd=tmp_path)
    assert result.code == 2, result.stderr
    assert "names the same file as" in one_error_line(result)
    assert not (tmp_path / "a.jsonl").exists()  # nothing measured, nothing written
