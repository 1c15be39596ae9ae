"""`dbstand study batch --quick`, small, on the servers the study starts itself: one file
per study, so pytest-xdist's workers (--dist loadfile) run the studies side by side."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quick_study import VERDICTS, check_study, verdicts_of


def test_batch_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.batch as batch

    monkeypatch.setitem(batch.QUICK, "rows", [300, 600, 1200])
    monkeypatch.setitem(batch.QUICK, "cast_rows", {"update": [300, 600, 1200],
                                                   "delete": [300, 600, 1200]})
    monkeypatch.setitem(batch.QUICK, "large_rows", 1200)
    monkeypatch.setitem(batch.QUICK, "max_iterations", 3)
    page = check_study(cli, "batch", tmp_path)
    # the seed's tables cell by cell, then this run's with both bindings
    assert "| 10,000 | seed (openGauss) | 9.78 s (1.00x) | 0.707 s (0.07x) |" in page
    assert "| 300 | here, correct binding (scaled) |" in page
    assert re.search(r"\| 1,200 \| here, seed's binding \| [^|]+\* \|", page)
    assert "key predicate cast (the study's pitfall" in page
    # insert again at each RTT, the seed's speed-ups beside
    assert "insert of 1,200 rows on each network path" in page
    for path in ("| proxy, 0 ms |", "| 0.2 ms |", "| 1 ms |"):
        assert path in page
    verdicts = verdicts_of(tmp_path / "batch.md")
    assert verdicts["pitfall-is-the-binding"] in VERDICTS
    # the order is judged at every size, not the largest alone
    row = next(ln for ln in page.splitlines() if ln.startswith("| insert-order |"))
    assert all(f"{n:,}:" in row for n in (300, 600, 1200)), row
