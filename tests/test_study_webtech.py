"""`dbstand study webtech --quick`, small, on the servers the study starts itself: one file
per study, so pytest-xdist's workers (--dist loadfile) run the studies side by side."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbstand.studies import get_study
from quick_study import VERDICTS, check_study, verdicts_of


def test_webtech_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.webtech as webtech

    keep = {"static-nginx", "php-apache-modphp", "perl-apache-modperl"}
    others = tuple(s for s in get_study("webtech").stacks(False) if s not in keep)
    monkeypatch.setitem(webtech.QUICK, "skip_stacks", others)
    monkeypatch.setitem(webtech.QUICK, "duration_s", 0.2)
    monkeypatch.setitem(webtech.QUICK, "repeats", 2)
    monkeypatch.setitem(webtech.QUICK, "load", "seed")  # short: the literal load
    monkeypatch.setitem(webtech.QUICK, "four_user_tests", ("db",))
    page = check_study(cli, "webtech", tmp_path)
    assert "Part I, one user: requests/s, seed | here" in page
    # the reference row: mod_php over itself is 1.00x, in the seed and here
    assert re.search(r"\| Mod_php/Apache \| php-apache-modphp \| 561 \(1\.00x\) \\\| "
                     r"[\d,]+ \(1\.00x\) \|", page)
    # the seed left the Servlet cell blank for mod_php: blank here too, not its hello
    assert re.search(r"\| Mod_php/Apache \| php-apache-modphp \| 561 \(1\.00x\) \\\| "
                     r"[\d,]+ \(1\.00x\) \| - \\\| - \|", page)
    verdicts = verdicts_of(tmp_path / "webtech.md")
    assert verdicts["asp-loop-collapse"] == "INCONCLUSIVE"   # its stand-in did not run
    assert verdicts["php-perl-level"] in VERDICTS
