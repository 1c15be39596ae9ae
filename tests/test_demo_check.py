"""`make demo` as a new user runs it, in a fresh clone with the system's build libraries
hidden (scripts/demo-check.sh): the README's first command, whole (its venv, dbstand with
the `demo` extra and the Rust engine, the default suite, the report). It runs on a worker
beside the other tests rather than before them: its default suite's figures are not
judged here (bench/default_suite judges them), only that every step works."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_make_demo_works_in_a_fresh_clone() -> None:
    # the clone's own `phase` lines stay in this output: under `make test` (PHASE_LOG
    # set) they would join its list of phases, as if they had run before pytest
    env = {k: v for k, v in os.environ.items() if k != "PHASE_LOG"}
    result = subprocess.run(["bash", str(ROOT / "scripts" / "demo-check.sh")], cwd=ROOT,
                            capture_output=True, text=True, timeout=1200, env=env,
                            stdin=subprocess.DEVNULL)
    tail = (result.stdout + result.stderr)[-3000:]
    assert result.returncode == 0, tail
    assert "demo-check: make demo in a fresh clone took" in result.stdout, tail
    # the default suite ran and wrote its report (the script checks report.html is there)
    assert "dbstand run --html report.html" in result.stdout, tail
