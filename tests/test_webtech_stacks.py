"""Every webtech server stack, as its manifest declares it: built, started on loopback,
verified by the workload's rules against a real MariaDB, one short keep-alive load,
stopped with no process left. A stack that cannot be built here fails its test."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from dbstand.loadgen.engine import run_closed
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import stacks_for
from dbstand.targets.managed import ServerRecord
from dbstand.workloads.served import failures
from dbstand.workloads.webtech.verify import SERVED

STACKS = [m.name for m in stacks_for("webtech")]
PREFIX = "dbstand_wt_"


@pytest.fixture(scope="module")
def world(mariadb: ServerRecord) -> ServerRecord:
    SERVED.prepare(mariadb.target(), PREFIX)
    return mariadb


def test_every_family_of_the_study_has_a_stack() -> None:
    languages = {m.language for m in stacks_for("webtech")}
    assert {"php", "perl", "java", "csharp", "javascript", "python", "go", "static"} <= \
        languages
    assert any(m.limit for m in stacks_for("webtech"))


@pytest.mark.parametrize("name", STACKS)
def test_stack_builds_verifies_and_holds_a_short_load(name: str, world: ServerRecord) -> None:
    manifest = next(m for m in stacks_for("webtech") if m.name == name)
    with running_stack(manifest, target=world.target(), prefix=PREFIX, workers=2,
                       static_dir=SERVED.static_dir) as handle:
        checks = SERVED.verify(handle, world.target(), PREFIX)
        assert {c.name for c in checks} == set(manifest.tests)
        assert not failures(checks), failures(checks)
        path = "/hello" if "hello" in manifest.tests else "/file"
        result = run_closed(handle.base_url + path, 2, requests=200)
        assert result.successes == 200 and result.failed == 0, result.status_counts
        tree = [handle.pid, *handle.descendants]
    assert not [p for p in tree if psutil.pid_exists(p) and
                psutil.Process(p).status() != psutil.STATUS_ZOMBIE], "a process outlived it"


def test_run_webtech_end_to_end(cli, mariadb_url: str, tmp_path: Path) -> None:
    """The study's two tables from a tiny run: a static limit row beside a dynamic stack."""
    out = tmp_path / "w.jsonl"
    res = cli("run", "webtech", "--stack", "static-nginx,go-nethttp", "--test",
              "file,hello,db", "--clients", "1,4", "--load", "seed", "--requests", "20",
              "--repeats", "2",
              "--target", mariadb_url, "--prefix", PREFIX, "-o", str(out))
    assert res.code == 0, res.stderr + res.stdout
    assert "one user" in res.stdout and "4 users" in res.stdout
    records = [json.loads(line) for line in out.read_text().splitlines()]
    cases = [r for r in records if r["type"] == "case"]
    assert len(cases) == 2 * 1 + 2 * 3  # static: file only (no hello, no db); go: three
    go_db = next(r for r in cases if r["stack"] == "go-nethttp" and r["op"] == "db")
    assert go_db["status"] == "ok" and go_db["db_cpu_us_per_req"] is not None
    assert go_db["app_cpu_us_per_req"] > 0 and go_db["errors"]["non_2xx"] == 0
    go_file = next(r for r in cases if r["stack"] == "go-nethttp" and r["op"] == "file"
                   and r["mode"] == "clients:1")
    md = cli("report", str(out), "-f", "csv")
    assert "limit_fraction" in md.stdout.splitlines()[0]
    assert go_file["ops_per_s"] > 0
