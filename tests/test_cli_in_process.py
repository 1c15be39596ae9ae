"""The in-process `cli` fixture tells the same story as a fresh interpreter, and a call
leaves nothing behind for the next test."""

from __future__ import annotations

import gc
import os
import signal
import sys
from pathlib import Path

import pytest

from dbstand import console as common
from dbstand.cli import app as app_module


@pytest.mark.parametrize("args", [
    ["list", "workloads"],                       # a rich table: width and colours
    ["run", "kv", "--revs", "0"],                # a user error: one line, exit 2
    ["run", "kv", "--revz", "5"],                # a usage error from click
    ["report", "/nonexistent/r.jsonl"],
])
def test_in_process_matches_a_fresh_process(cli_in_process, cli_process, args: list[str]
                                            ) -> None:
    inside, outside = cli_in_process(*args), cli_process(*args)
    assert (inside.code, inside.stdout, inside.stderr) == \
        (outside.code, outside.stdout, outside.stderr)


def test_a_call_leaves_no_state_behind(cli_in_process, tmp_path: Path) -> None:
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    environ, cwd, argv = dict(os.environ), os.getcwd(), list(sys.argv)
    gc_state = (gc.isenabled(), gc.get_freeze_count())
    consoles = [(c.file, c.width, c.color_system) for c in (common.console, common.err_console)]
    res = cli_in_process("run", "kv", "--op", "select", "--revs", "50", "--rows", "50",
              "--min-iterations", "3", "--max-iterations", "3", "-o", "r.jsonl",
              cwd=tmp_path, env={"DBSTAND_TEST_MARKER": "1"})
    assert res.code == 0, res.stderr
    assert (tmp_path / "r.jsonl").exists()  # the call ran in `cwd`...
    assert os.getcwd() == cwd  # ...and came back
    assert {s: signal.getsignal(s) for s in handlers} == handlers
    assert dict(os.environ) == environ and sys.argv == argv
    assert (gc.isenabled(), gc.get_freeze_count()) == gc_state
    assert [(c.file, c.width, c.color_system)
            for c in (common.console, common.err_console)] == consoles


def test_a_crash_reads_as_the_interpreter_would_report_it(
        cli_in_process, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception escaping main() is a traceback and status 1, as in a real process,
    so that assertions on the status or on "Traceback" still catch it."""
    def crash(**_: object) -> None:
        raise RuntimeError("boom")

    sigterm = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(app_module, "app", crash)
    res = cli_in_process("list", "workloads")
    assert res.code == 1
    assert "Traceback" in res.stderr and "RuntimeError: boom" in res.stderr
    assert signal.getsignal(signal.SIGTERM) == sigterm
