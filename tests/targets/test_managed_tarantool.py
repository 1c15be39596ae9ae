"""Managed Tarantool: real instances on loopback, driven through the `tarantool` connector."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tarantool

import managed_server_checks as checks
from dbstand.errors import ServerError
from dbstand.targets.managed import ServerRecord, pid_running
from dbstand.targets.tarantool import managed as target


def leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("dbstand-tarantool-*")}


def connect(record: ServerRecord, **overrides: Any) -> Any:
    url = record.target()
    args = {"user": url.user, "password": url.password, "connection_timeout": 5,
            **overrides}
    return tarantool.Connection(url.host, url.port, **args)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerRecord]:
    yield from checks.serve(target.ManagedTarantool(), leftovers)


def test_record_describes_the_instance(server: ServerRecord) -> None:
    assert server.kind == "tarantool"
    assert server.url == f"tarantool://dbstand@127.0.0.1:{server.port}"
    assert server.password and server.password not in server.url
    assert pid_running(server.pid)
    settings = server.settings
    assert settings["wal_mode"] == "none"
    assert settings["readahead"] == 1024 * 1024
    assert settings["engine"] == "memtx" and settings["temporary_spaces"] == "yes"
    assert settings["memtx_memory"] == 256 * 1024 * 1024
    assert all(server.password not in str(v) for v in settings.values())


def test_crud_binary_protocol_and_sql(server: ServerRecord) -> None:
    conn = connect(server)
    try:
        version = conn.eval("return box.info.version").data[0]
        options = {**target.space_options(version, server.settings), "format": [
            {"name": "id", "type": "unsigned"}, {"name": "name", "type": "string"}]}
        conn.eval("local name, opts = ... box.schema.space.create(name, opts) "
                  "box.space[name]:create_index('primary', {sequence = true})",
                  ["dbstand_kv", options])
        assert conn.eval("return box.space.dbstand_kv.temporary").data == [True]
        space = conn.space("dbstand_kv")
        for i in range(1, 11):
            assert space.insert((None, f"tuple_{i}")).data == [[i, f"tuple_{i}"]]
        assert space.select(3).data == [[3, "tuple_3"]]
        space.update(4, [("=", 1, "changed")])  # field numbers are 0-based here
        space.upsert((5, "ignored"), [("=", 1, "upserted")])
        space.replace((6, "replaced"))
        space.delete(7)
        got = space.select().data  # all tuples
        assert len(got) == 9
        assert [4, "changed"] in got and [5, "upserted"] in got and [6, "replaced"] in got
        # the same space through SQL, with bound parameters
        inserted = conn.execute('INSERT INTO "dbstand_kv" ("name") VALUES (?)', ["sql_row"])
        assert inserted.affected_row_count == 1
        rows = conn.execute('SELECT "id", "name" FROM "dbstand_kv" WHERE "id" = ?', [11])
        assert rows.data == [[11, "sql_row"]]
        conn.eval("box.space.dbstand_kv:drop()")
    finally:
        conn.close()


def test_server_facts(server: ServerRecord) -> None:
    conn = connect(server)
    try:
        facts = target.server_facts(conn)
    finally:
        conn.close()
    assert target.version_tuple(facts["version"]) >= (2, 0, 0)
    assert facts["pid"] == server.pid
    assert facts["wal_mode"] == "none"
    assert facts["readahead"] == 1024 * 1024
    assert facts["memtx_memory"] == 256 * 1024 * 1024
    assert facts["checkpoint_interval"] == 0


def test_temporary_space_option_by_version() -> None:
    assert target.temporary_space_option("2.6.0-0-g47aa4e01e") == {"temporary": True}
    assert target.temporary_space_option("2.11.4") == {"temporary": True}
    assert target.temporary_space_option("3.2.1-0-gabc") == {"type": "data-temporary"}
    assert target.space_options("2.6.0", {"engine": "vinyl"}) == {"engine": "vinyl"}
    assert target.space_options("2.6.0", {"temporary_spaces": "no"}) == {"engine": "memtx"}


def test_wrong_password_is_refused(server: ServerRecord) -> None:
    with pytest.raises(tarantool.error.DatabaseError, match="Incorrect password"):
        connect(server, password="wrong-" + server.password)


def test_guest_can_do_nothing(server: ServerRecord) -> None:
    conn = tarantool.Connection("127.0.0.1", server.port, connection_timeout=5)
    try:
        with pytest.raises(tarantool.error.DatabaseError, match="denied"):
            conn.eval("return 1")
    finally:
        conn.close()


def test_listens_on_loopback_only(server: ServerRecord) -> None:
    checks.listens_on_loopback_only(server)


def test_second_instance_beside_the_first(server: ServerRecord) -> None:
    other_server = target.ManagedTarantool(settings={"wal_mode": "write",
                                                     "temporary_spaces": "no"})
    with checks.beside(server, other_server, connect, leftovers) as (other, first, second):
        assert other.settings["temporary_spaces"] == "no"
        second.eval("box.schema.space.create('only_here')")
        assert first.eval("return box.space.only_here == nil").data == [True]
        assert target.server_facts(second)["wal_mode"] == "write"
        assert target.server_facts(first)["wal_mode"] == "none"


def test_stop_removes_process_and_dir() -> None:
    checks.stop_removes_process_and_dir(target.ManagedTarantool())


def test_explicit_port_in_use_is_refused() -> None:
    checks.explicit_port_in_use_is_refused(target.ManagedTarantool)


def test_failed_start_is_one_clear_line() -> None:
    server = target.ManagedTarantool(settings={"readahead": "huge"})
    checks.failed_start_is_one_clear_line(server, "Incorrect value for option 'readahead'",
                                          leftovers)


def test_reserved_setting_is_refused() -> None:
    with pytest.raises(ServerError, match="listen"):
        target.ManagedTarantool(settings={"listen": "0.0.0.0:3301"}).start()


def test_instance_outlives_the_process_that_started_it() -> None:
    """`dbstand server up`: the instance keeps running; a later process stops it."""

    def ping(conn: Any) -> None:
        assert conn.eval("return 1 + 1").data == [2]

    checks.outlives_its_starter(target.ManagedTarantool, connect, ping, timeout_s=60)
