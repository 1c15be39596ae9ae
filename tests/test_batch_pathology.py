"""batch: the study's pitfall on purpose (--key-predicate cast), the ratios against
executemany and the limit row, rankings slowest first, unstable fixed repetitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batch_fixtures import FAST, case_records
from dbstand.targets.url import parse_target_url
from dbstand.workloads.batch.sql import POSTGRESQL
from dbstand.workloads.batch.workload import BatchOptions, build_cases

CAST_FORM = "CAST(f_key AS numeric) = CAST(CAST(? AS text) AS numeric)"


def test_cast_predicate_sql() -> None:
    cast = POSTGRESQL.with_key_predicate("cast")
    assert cast.update_row("t") == f"UPDATE t SET f_value = ? WHERE {CAST_FORM}"
    assert cast.key_form == CAST_FORM
    assert "CAST(t.f_key AS numeric) = CAST(CAST(d.k AS text) AS numeric)" in \
        cast.values_statement("update", "t", 2)
    assert POSTGRESQL.delete_row("t") == "DELETE FROM t WHERE f_key = ?"  # default intact
    assert POSTGRESQL.values_statement("update", "t", 1).endswith("WHERE t.f_key = d.k")


def test_apis_without_a_key_predicate_are_left_out_with_a_note() -> None:
    target = parse_target_url("mysql://u@127.0.0.1:3306/db")
    notes: list[str] = []
    cases = build_cases([target], ["pymysql"], ["values", "executemany"],
                        ["insert", "update"], [100], BatchOptions(), limits=False,
                        key_predicates=["index", "cast"], notes=notes)
    got = {(c.params["api"], c.op, c.params.get("key_predicate", "index")) for c in cases}
    assert ("values", "update", "cast") not in got and ("executemany", "update", "cast") in got
    assert not any(op == "insert" and p == "cast" for _, op, p in got)  # finds no rows by key
    assert any("ON DUPLICATE KEY UPDATE" in note for note in notes)


@pytest.mark.exclusive  # growth exponents measured here are compared
def test_the_pitfall_shown_and_flagged(cli, pg_url: str, tmp_path: Path) -> None:
    """Four sizes over a 6x span. At 500-2,000 rows the keyed path's own fit read
    1.07-1.25 and the two exponents' difference 0.30-0.72 (six runs alone, 2026-11-27:
    one make test failed at 0.297), with the round trips still most of the cast path's
    time; with 3,000 rows added, 0.57-0.89 in four runs (keyed 0.92-1.05), for about
    9 s more (21 s in all)."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", "psycopg2",
              "--api", "executemany,execute_values", "--op", "insert,delete",
              "--rows", "500,1000,2000,3000", "--large-rows", "3000", "--key-predicate",
              "index,cast", "--no-limit", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    cast = [r for r in recs if r["params"].get("key_predicate") == "cast"]
    assert {r["op"] for r in cast} == {"delete"}  # inserts find no rows by key
    assert all(r["key_form"] == CAST_FORM for r in cast)
    assert not any("key_predicate" in r["params"] for r in recs if r not in cast)
    # labelled in the tables, in its own table
    assert "executemany [cast key, no index]" in res.stdout
    assert "key predicate cast (the study's pitfall, on purpose" in res.stdout
    payload = json.loads(cli("report", str(out), "-f", "json").stdout)
    fits = {(s["op"], s["name"]): s for s in payload["scaling"]}
    index = fits[("delete", "psycopg2 executemany")]
    pathological = fits[("delete", "psycopg2 executemany [cast key, no index]")]
    # one scan of the table per statement: the time per row grows with the table
    assert pathological["exponent"] > index["exponent"] + 0.3, (pathological, index)
    assert pathological["exponent"] > 1.3 and index["verdict"] != "superlinear"
    if pathological["verdict"] == "superlinear":
        assert "SUPERLINEAR psycopg2 executemany [cast key, no index] delete" in res.stdout
    # ratios against executemany and the ranking slowest first, at every size it changes
    rows = [r for r in payload["rows"] if r["op"] == "delete" and r["key_predicate"] == "index"]
    assert all(r["vs_baseline"] == 1.0 for r in rows if r["api"] == "executemany")
    assert all(r["baseline"] == "psycopg2 executemany" for r in rows)
    assert "delete, slowest first at 500 rows:" in res.stdout
    ranking = payload["ranking"]
    assert any(key.endswith("[cast]") for key in ranking)
    first = next(v for k, v in ranking.items() if k.startswith("delete") and "[cast]" not in k)
    assert set(first["slowest_first_by_rows"]) == {"500", "1000", "2000", "3000"}
    assert "vs executemany" in res.stdout


def test_ratios_against_the_limit_row(cli, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", "psycopg2", "--api",
              "executemany,execute_values", "--op", "insert", "--rows", "200,400",
              "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    payload = json.loads(cli("report", str(out), "-f", "json").stdout)
    values = [r for r in payload["rows"] if r["api"] == "execute_values"]
    assert len(values) == 2 and all(r["vs_limit"] and r["vs_limit"] > 0 for r in values)
    assert all(r["vs_baseline"] > 0 for r in values)
    titles = [t["title"] for t in payload["tables"]]
    assert "insert: seconds against executemany / against the limit row, at each size " \
        "(↓ below 1: faster than it)" in titles


def test_fixed_repetitions_are_flagged_unstable_too(cli, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", "psycopg2", "--api",
              "executemany", "--op", "insert", "--rows", "300", "--large-rows", "300",
              "--no-limit", "--ci", "0.001", "-o", str(out))
    assert res.code == 0, res.stderr
    (rec,) = case_records(out)
    assert rec["repetition"] == "fixed:3" and rec["stop_reason"] == "fixed-repetitions"
    assert rec["unstable"] and rec["ci95_pct"] > 0.001
    assert "fixed repetitions of a large size" in res.stdout
