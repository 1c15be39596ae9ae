"""`dbstand study NAME`: each study on small sizes, on the servers it starts itself,
with the seed's figures beside the measured ones and every claim given a verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dbstand.studies import STUDIES, get_study
from dbstand.studies.verdict import KINDS

VERDICTS = ("REPRODUCED", "DIFFERS", "INCONCLUSIVE", "CANNOT BE CHECKED")


def claim_rows(stdout: str, ids: list[str]) -> dict[str, str]:
    """Each claim id's verdict as printed in the claims table."""
    found = {}
    for claim_id in ids:
        line = next((ln for ln in stdout.splitlines() if ln.strip().startswith(claim_id)),
                    None)
        assert line is not None, f"claim {claim_id} missing"
        found[claim_id] = next((v for v in VERDICTS if v in line), "")
    return found


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
    got = verdicts_of(md)
    assert set(got) == set(ids), (set(ids) - set(got), got)
    assert "Verdicts:" in res.stdout and "The seed's claims" in res.stdout
    again = cli("study", name, "--quick", "--results", str(out))
    assert again.code == 0, again.stderr
    assert "study ran in" not in again.stdout and "Verdicts:" in again.stdout
    return page


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


# --- each study, small, on its own servers ------------------------------------------------
def test_kv_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.kv as kv

    monkeypatch.setitem(kv.QUICK, "ops", ["select"])
    monkeypatch.setitem(kv.QUICK, "revs", 200)
    monkeypatch.setitem(kv.QUICK, "max_iterations", 4)
    monkeypatch.setitem(kv.QUICK, "asyncio_sweep", [5])
    monkeypatch.setitem(kv.QUICK, "threads_sweep", [1, 2])
    monkeypatch.setattr(kv, "ROWS", 500)
    page = check_study(cli, "kv", tmp_path)
    assert "Settings: the seed's and this run's" in page and "| write-ahead log | none | none |" \
        in page
    recs = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    cases = [r for r in recs if r["type"] == "case"]
    assert all(r["status"] == "ok" for r in cases), [r.get("error") for r in cases]
    assert {r["params"]["loop"] for r in cases if "asyncio" in r["mode"]} == {"asyncio",
                                                                              "uvloop"}
    assert all("cpu_pinning" in r["environment"]["server"] for r in cases)
    assert all(r["baseline"] == "tarantool[binary]@sync" for r in cases)
    # the sweeps the claims need ran: asyncio 1, 5, 25 and threads 1, 2, 16
    assert {r["mode"] for r in cases if r["stack"] == "asynctnt"} >= {
        "asyncio:1", "asyncio:5", "asyncio:25", "processes:2xasyncio:25"}
    assert {r["mode"] for r in cases if r["stack"] == "tarantool"} >= {
        "sync", "threads:1", "threads:2", "threads:16"}
    # select again at each RTT, blocking and with coroutines, shown beside the claims
    assert {r["params"].get("db_rtt") for r in cases} == {None, "0 ms", "0.2 ms", "1 ms"}
    assert "select on each network path" in page
    for path in ("| proxy, 0 ms |", "| 0.2 ms |", "| 1 ms |"):
        assert path in page


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
