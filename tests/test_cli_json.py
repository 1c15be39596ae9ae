"""`--format json` on the listing and status commands: what a script reads instead of
parsing rich tables (docs/cli-json.md)."""

from __future__ import annotations

import json

from dbstand.stacks.manifest import all_manifests
from dbstand.targets.kinds import all_kinds
from dbstand.targets.managed import ServerRecord, save_record
from dbstand.workloads import ENTRIES
from dbstand.workloads.catalog import STACKS


def _json(cli, *args: str) -> list[dict]:
    res = cli(*args, "--format", "json")
    assert res.code == 0, res.stdout + res.stderr
    rows = json.loads(res.stdout)
    assert isinstance(rows, list)
    return rows


def test_list_stacks_names_every_stack(cli) -> None:
    rows = _json(cli, "list", "stacks")
    names = [r["stack"] for r in rows]
    assert names == [*STACKS, *all_manifests()]
    first = rows[0]
    assert first["kind"] == "in-process" and isinstance(first["installed"], bool)
    assert isinstance(first["workloads"], list) and isinstance(first["targets"], list)
    only_kv = _json(cli, "list", "stacks", "--workload", "kv")
    assert only_kv and all("kv" in r["workloads"] for r in only_kv)


def test_list_workloads_and_targets(cli) -> None:
    workloads = _json(cli, "list", "workloads")
    assert {r["workload"]: r["operations"] for r in workloads} == {
        n: list(e.operations) for n, e in ENTRIES.items()}
    assert {r["status"] for r in workloads} == {"available"}
    targets = _json(cli, "list", "targets")
    assert {r["kind"]: r["default_port"] for r in targets} == {
        k.name: k.default_port for k in all_kinds().values()}


def test_stack_list_is_every_server_stack(cli) -> None:
    rows = _json(cli, "stack", "list", "--workload", "webtech")
    manifests = {n: m for n, m in all_manifests().items() if m.implements("webtech")}
    assert [r["stack"] for r in rows] == list(manifests)
    assert all(r["installed"] == (not r["missing"]) for r in rows)
    by_name = {r["stack"]: r for r in rows}
    # each stack's profiler and what it names; interpreters under perf: native frames only
    assert by_name["java-tomcat-servlet"]["profiler"].startswith("perf (frame pointers)")
    assert by_name["python-flask-gunicorn"]["profiler"] == "py-spy"
    for name in ("php-apache-modphp", "perl-starman", "csharp-mono-webforms"):
        assert by_name[name]["profiler"].startswith("perf"), by_name[name]
        assert by_name[name]["profiler_names"].startswith("native frames only"), by_name[name]


def test_server_status_json_and_its_password(cli, pg: ServerRecord) -> None:
    assert _json(cli, "server", "status") == []  # no servers: still one JSON array
    save_record(pg)  # the session's PostgreSQL, recorded in this test's DBSTAND_HOME
    rows = _json(cli, "server", "status")
    assert [(r["kind"], r["pid"], r["alive"]) for r in rows] == [(pg.kind, pg.pid, True)]
    assert "password" not in rows[0] and pg.password not in json.dumps(rows)
    shown = _json(cli, "server", "status", "--show-password")
    assert shown[0]["password"] == pg.password


def test_bad_format_is_one_line(cli) -> None:
    res = cli("list", "targets", "--format", "yaml")
    assert res.code == 2
    assert "--format" in res.stderr and "Traceback" not in res.stderr
