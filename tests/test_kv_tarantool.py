"""kv on a real Tarantool started by dbstand itself: tarantool-python through the
binary protocol and through SQL."""

from __future__ import annotations

import json
from pathlib import Path

import tarantool

from dbstand.targets.managed import ServerRecord

FAST = ["--revs", "200", "--rows", "300", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def connect(record: ServerRecord) -> tarantool.Connection:
    url = record.target()
    return tarantool.Connection(url.host, url.port, user=url.user, password=url.password)


def test_binary_and_sql_do_every_op(cli, tarantool_srv: ServerRecord, tarantool_url: str,
                                    tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool",
              "--protocol", "binary,sql", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert len(recs) == 12 and all(r["status"] == "ok" for r in recs), \
        [r.get("error") for r in recs]
    assert {(r["params"]["protocol"], r["op"]) for r in recs} == {
        (p, op) for p in ("binary", "sql")
        for op in ("select", "insert", "update", "upsert", "replace", "delete")}
    for r in recs:
        server = r["environment"]["server"]
        # the kv study's settings, in every result
        assert server["wal_mode"] == "none" and server["readahead"] == 1024 * 1024
        assert server["space_engine"] == "memtx" and server["space_temporary"] is True
        assert server["version"].startswith("2.") or server["version"][0].isdigit()
        p = r["probes"]
        assert p["server_pid_found"] and p["server_pid"] == tarantool_srv.pid
        assert 0 < p["server_cpu_s"] < p["window_s"] * p["cores"]
        kinds = p["statements_per_op"]
        if r["params"]["protocol"] == "sql":
            assert "not prepared" in r["client"]
            # one EXECUTE per op (upsert: UPDATE that always hits, keys are existing ones)
            assert kinds["other"] == 1.0 and sum(kinds.values()) == 1.0, (r["op"], kinds)
        else:
            want = {"select": "select", "insert": "insert", "update": "update",
                    "upsert": "other", "replace": "other", "delete": "delete"}[r["op"]]
            assert kinds[want] == 1.0 and sum(kinds.values()) == 1.0, (r["op"], kinds)
    forms = {(r["params"]["protocol"], r["op"]): r["op_form"] for r in recs}
    assert forms[("binary", "upsert")] == "space:upsert"
    assert "no SQL upsert" in forms[("sql", "upsert")]
    assert "tarantool[sql]" in res.stdout and "tarantool[binary]" in res.stdout
    assert tarantool_srv.password not in out.read_text() + res.stdout + res.stderr
    # dbstand dropped its space and its registry
    conn = connect(tarantool_srv)
    try:
        assert conn.eval("return box.space.dbstand_kv == nil and "
                         "box.space.dbstand_owned == nil").data == [True]
    finally:
        conn.close()


def test_someone_elses_space_is_refused_and_survives(cli, tarantool_srv: ServerRecord,
                                                     tarantool_url: str,
                                                     tmp_path: Path) -> None:
    conn = connect(tarantool_srv)
    try:
        conn.eval("local s = box.schema.space.create('dbstand_kv') "
                  "s:create_index('pk') s:insert{42, 'keep me'}")
        out = tmp_path / "r.jsonl"
        res = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool",
                  "-o", str(out), *FAST)
        assert res.code == 2, res.stderr
        assert "space dbstand_kv exists and was not created by dbstand" in res.stderr
        assert not out.exists()
        assert conn.eval("return box.space.dbstand_kv:get(42)").data == [[42, "keep me"]]
    finally:
        conn.eval("if box.space.dbstand_kv then box.space.dbstand_kv:drop() end")
        conn.close()


def test_server_up_tarantool_with_the_study_settings(cli, cli_process, tmp_path: Path
                                                     ) -> None:
    """`up` runs as its own process: the server must outlive the command that started it."""
    up = cli_process("server", "up", "tarantool")
    try:
        assert up.code == 0, up.stderr
        assert "wal_mode=none" in up.stdout and "readahead=1048576" in up.stdout
        url = next(w for w in up.stdout.split() if w.startswith("tarantool://"))
        out = tmp_path / "r.jsonl"
        res = cli("run", "kv", "--target", url, "--op", "select,insert", "--protocol", "sql",
                  "-o", str(out), *FAST)
        assert res.code == 0, res.stderr
        recs = cases(out)
        assert [r["stack"] for r in recs] == ["tarantool", "tarantool"]
        assert all(r["environment"]["server"]["managed"] for r in recs)
    finally:
        down = cli("server", "down", "tarantool")
    assert down.code == 0, down.stderr
