"""Helpers of the fault-injection tests: tagged dbstand processes (to find orphans),
the one-error-line check, and small tmpfs mounts.

`start_cli` runs `dbstand` as a user would, in a process whose environment holds a
unique tag; every process it starts inherits it, so `orphans(tag)` finds any that
outlived the command (the "no orphan process" check of every fault test).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


TAG_ENV = "DBSTAND_FAULT_TAG"


def orphans(tag: str) -> list[str]:
    """Processes (pid and command line) whose environment holds `tag`."""
    found = []
    needle = f"{TAG_ENV}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text().rpartition(")")[2].split()
            if stat and stat[0] in ("Z", "X"):
                continue  # a zombie holds no resources: its parent reaps it
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append(f"{entry.name}: {cmd.strip()}")
    return found


@dataclass
class Tagged:
    """A dbstand command started in the background with a tag."""

    proc: subprocess.Popen[str]
    tag: str

    def wait(self, timeout: float) -> Result:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"dbstand did not end within {timeout:g} s:\n{err}") from None
        return Result(self.proc.returncode, out, err)


def start_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              tag: str | None = None) -> Tagged:
    """`dbstand ARGS` in the background, tagged (see `orphans`)."""
    tag = tag or uuid.uuid4().hex
    code = "from dbstand.cli.app import main\nmain()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=cwd,
        env={**os.environ, "COLUMNS": "200", TAG_ENV: tag, **(env or {})})
    return Tagged(proc, tag)


def run_tagged(*args: str, timeout: float = 300, **kwargs: object) -> tuple[Result, str]:
    """Run `dbstand ARGS` to the end; (its result, its tag)."""
    tagged = start_cli(*args, **kwargs)  # type: ignore[arg-type]
    return tagged.wait(timeout), tagged.tag


def one_error_line(result: Result) -> str:
    """The single `dbstand: error:` line a failure must print, and no traceback."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("dbstand: error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@contextlib.contextmanager
def tmpfs(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs on `path` (root only), unmounted at the end."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True,
                   capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def need_root_mount() -> None:
    """The full-disk faults mount a small tmpfs. `make test` runs as root (it installs
    Debian packages), so a test that cannot mount fails with the reason, never
    passes unseen as a skip."""
    if os.geteuid() != 0:
        pytest.fail("needs root to mount a small tmpfs (a read-only or full filesystem): "
                    "run the tests as `make test` does, as root")
    if not Path("/proc/self/mountinfo").exists():
        pytest.fail("no /proc: cannot mount a tmpfs here")
