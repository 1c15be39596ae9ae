"""`dbstand study docquery --quick`, small, on the servers the study starts itself: one file
per study, so pytest-xdist's workers (--dist loadfile) run the studies side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from quick_study import VERDICTS, check_study, verdicts_of


def test_docquery_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.docquery as docquery

    monkeypatch.setitem(docquery.QUICK, "size", 300)
    monkeypatch.setitem(docquery.QUICK, "test1_requests", 200)
    monkeypatch.setitem(docquery.QUICK, "load", "seed")  # short: the literal load
    monkeypatch.setattr(docquery.DocqueryStudy, "stacks",
                        lambda self: ["docquery-tornado-pymongo", "docquery-tornado-motor"])
    page = check_study(cli, "docquery", tmp_path)
    assert "| Motor | docquery-tornado-motor |" in page and "376 ms" in page
    verdicts = verdicts_of(tmp_path / "docquery.md")
    assert verdicts["pymongo-2.8-poor"] == "CANNOT BE CHECKED"   # no stand-in exists
    assert verdicts["gevent-no-gain"] == "INCONCLUSIVE"      # its stack did not run
    assert verdicts["motor-fast"] in VERDICTS
    assert "| motor-p50 |" in page.split("The seed's claims not checked here")[1]
