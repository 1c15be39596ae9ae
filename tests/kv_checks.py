"""kv checks shared by the per-target test modules (tests/test_kv_*.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def assert_user_table_refused(cli: Callable[..., Any], url: str, stack: str, out: Path,
                              options: Sequence[str]) -> None:
    """A kv run on a target where `dbstand_kv` is a user's own table stops with exit 2
    before it writes results; the caller created that table and checks it survived."""
    res = cli("run", "kv", "--target", url, "--stack", stack, "-o", str(out), *options)
    assert res.code == 2
    assert "dbstand_kv exists and was not created by dbstand" in res.stderr
    assert not out.exists()
