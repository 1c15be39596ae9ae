"""Helpers of the study tests (tests/test_study*.py): run a quick study once and check
what every study's page and results must hold."""

from __future__ import annotations

import re
from pathlib import Path

from dbstand.studies import get_study

VERDICTS = ("REPRODUCED", "DIFFERS", "INCONCLUSIVE", "CANNOT BE CHECKED")


def verdicts_of(path: Path) -> dict[str, str]:
    """Claim id -> verdict from the study's JSON (re-rendered from its results)."""
    text = path.read_text()
    return dict(re.findall(r"^\| ([a-z0-9.-]+) \|.*\| (" + "|".join(VERDICTS) + r") \|",
                           text, re.MULTILINE))


def check_study(cli, name: str, tmp_path: Path, extra: tuple[str, ...] = ()) -> str:
    """Run the quick study, then check it: every claim a verdict, a page written, the
    results re-readable with --results (no second run)."""
    out, md = tmp_path / "r.jsonl", tmp_path / f"{name}.md"
    res = cli("study", name, "--quick", "-o", str(out), "--markdown", str(md), *extra)
    assert res.code == 0, res.stderr + res.stdout[-3000:]
    study = get_study(name)
    ids = [c["id"] for c in study.data["claims"]]
    assert "Published beside measured" in md.read_text()
    page = md.read_text()
    assert page.startswith(f"# Study {name}: ") and "This page is generated" in page
    assert f"dbstand study {name} --quick --markdown" in page
    assert re.search(r"\(wall time [\d,]+ s\)", page), page[:800]
    assert re.search(r"load average \(1 min\) over the run: mean [\d.]+, max [\d.]+ "
                     r"\(\d+ readings", page), page[:800]
    got = verdicts_of(md)
    assert set(got) == set(ids), (set(ids) - set(got), got)
    assert "Verdicts:" in res.stdout and "The seed's claims" in res.stdout
    again_md = tmp_path / f"{name}-again.md"
    again = cli("study", name, "--quick", "--results", str(out), "--markdown", str(again_md))
    assert again.code == 0, again.stderr
    # a page made from --results still gives the run's wall time, from its records
    assert re.search(r"\(wall time [\d,]+ s\)", again_md.read_text())
    assert "study ran in" not in again.stdout and "Verdicts:" in again.stdout
    return page
