"""`dbstand study parking --quick`, small, on the servers the study starts itself: one file
per study, so pytest-xdist's workers (--dist loadfile) run the studies side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quick_study import check_study, verdicts_of


def test_parking_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.parking as parking

    monkeypatch.setitem(parking.QUICK, "passes", 1)
    monkeypatch.setitem(parking.QUICK, "batches", 2)
    monkeypatch.setitem(parking.QUICK, "max_batches", 2)  # the seed's fixed count
    page = check_study(cli, "parking", tmp_path)
    assert "Table 2: SQL statements per suite pass" in page
    assert "| SELECT | 78 | 106 |" in page
    assert "| TOTAL (the five kinds) | 238 | 264 |" in page   # "other" left out
    assert "Table 4: % gained by turning logging off" in page
    verdicts = verdicts_of(tmp_path / "parking.md")
    assert verdicts["pypy-no-gain"] != "CANNOT BE CHECKED"   # both PyPy stacks exist
    # MariaDB's counter counts SELECT ... FOR UPDATE as SELECT: no verdict on plain SELECT
    assert verdicts["orm-selects"] == "INCONCLUSIVE"
    assert "The seed's claims not checked here" in page and "code-size-close" in page
    recs = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    cases = [r for r in recs if r["type"] == "case"]
    assert {r["stack"] for r in cases} >= {"pypy-sqlalchemy", "python-sqlalchemy"}
    assert all(r["app_cpu_ci95_pct"] is not None for r in cases if r["status"] == "ok")
    assert all(f["share_pct"] is not None for r in cases if r["status"] == "ok"
               for f in r["functions"].values())
