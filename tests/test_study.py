"""`dbstand study`: each study's data file (every claim a check, its source named) and an
unknown name. Each study itself runs, small, in its own file (tests/test_study_NAME.py)."""

from __future__ import annotations

import re

import pytest

from dbstand.studies import STUDIES, get_study
from dbstand.studies.verdict import KINDS


# --- the data files ------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(STUDIES))
def test_every_claim_has_a_check_and_the_data_names_its_source(name: str) -> None:
    study = get_study(name)
    src = study.data["source"]
    assert re.fullmatch(r"00[0-4]_[0-9a-f]{16}", src["seed"]) and src["title"]
    ids = [c["id"] for c in study.data["claims"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 5
    checks = study.checks()
    for claim in study.data["claims"]:
        kind = claim.get("check", "ratio")
        assert kind in checks, (name, claim["id"], kind)   # no verdict written in the data
        assert claim["claim"].endswith(".") and claim.get("seed")
        assert "tolerance" not in claim and "verdict" not in claim, claim["id"]
        if "expect" in claim:
            assert claim["expect"] in KINDS, claim["id"]
        if "spread" in claim:   # the seed's own spread, said where it comes from
            assert claim.get("spread_from") and claim["expect"] == "about"
        if kind == "no_stand_in":   # only where the study has no stand-in for it
            assert not study.stand_in_of(claim["config"]) and claim["missing"]
    for entry in study.data.get("unchecked", []):
        assert entry["id"] not in ids and entry["claim"].endswith(".") and entry["reason"]


def test_an_unknown_study(cli) -> None:
    res = cli("study", "nosuch")
    assert res.code == 2 and "unknown study 'nosuch'" in res.stderr
