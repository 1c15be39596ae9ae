"""Probes checked against known work on real servers: N inserts are N INSERT
statements; CPU is above zero and below wall time x cores; the counters leave out
their own queries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import psutil
import pymysql
import pytest
import tarantool

from dbstand.probes import sockdiag
from dbstand.probes.case import CaseProbes
from dbstand.probes.cpu import TreeCpu
from dbstand.probes.locate import _listener_through_psutil, server_pid
from dbstand.probes.statements import kind_of
from dbstand.proctree import tree
from dbstand.targets.managed import ServerRecord, free_port
from dbstand.targets.url import parse_target_url
from dbstand.workloads.admin import admin_client
from dbstand.workloads.catalog import get_stack

N = 150


def window(probes: CaseProbes, work) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    probes.begin()
    work()
    probes.end()
    return time.perf_counter() - start


def check_cpu(result: dict, wall_s: float) -> None:
    cores = psutil.cpu_count()
    assert result["server_pid_found"] is True
    assert 0 < result["server_cpu_s"] < wall_s * cores
    assert 0 < result["client_cpu_s"] < wall_s * cores


def test_statement_kinds_from_sql_text() -> None:
    assert kind_of("SELECT id FROM t WHERE id = $1") == "select"
    assert kind_of("  select id from t where id = 1 for update") == "select_for_update"
    assert kind_of("SELECT 1 FROM t FOR NO KEY UPDATE") == "select_for_update"
    assert kind_of("(SELECT 1)") == "select"
    assert kind_of("INSERT INTO t (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE "
                   "SET name = excluded.name") == "insert"
    assert kind_of("update t set name = 'x'") == "update"
    assert kind_of("DELETE FROM t WHERE id = 3") == "delete"
    assert kind_of("COMMIT") == "other" and kind_of("") == "other"


def test_postgresql_inserts_counted_by_pg_stat_statements(pg: ServerRecord) -> None:
    target = pg.target()
    client = get_stack("psycopg").load("kv")(target, "probe_")
    client.connect()
    probes = CaseProbes(target, "probe_", admin=admin_client)
    try:
        assert probes.statements_source == "pg_stat_statements"
        cur = client.cur
        cur.execute("CREATE TABLE probe_t (id int)")

        def work() -> None:
            for i in range(N):
                cur.execute("INSERT INTO probe_t VALUES (%s)", (i,))
            cur.execute("SELECT id FROM probe_t WHERE id = 0 FOR UPDATE")

        wall = window(probes, work)
        wall += window(probes, lambda: cur.execute("DELETE FROM probe_t"))
        result = probes.result(N, 1)
        cur.execute("DROP TABLE probe_t")
    finally:
        probes.close()
        client.close()
    assert result["statements_total"] == {"select": 0, "select_for_update": 1, "insert": N,
                                          "update": 0, "delete": 1, "other": 0}
    assert result["statements_per_op"]["insert"] == 0.5  # N inserts in two windows of N
    check_cpu(result, wall)
    # a fixture's server has no `server up` record: found by its listening port
    assert result["server_pid"] == pg.pid
    assert "listening on port" in result["server_pid_source"]


def test_mariadb_inserts_counted_by_com_counters(mariadb: ServerRecord) -> None:
    target = mariadb.target()
    conn = pymysql.connect(host=target.host, port=target.port, user=target.user,
                           password=target.password, database=target.database,
                           autocommit=True)
    probes = CaseProbes(target, "probe_", admin=admin_client)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE probe_t (id INT)")

        def work() -> None:
            for i in range(N):
                cur.execute("INSERT INTO probe_t VALUES (%s)", (i,))
            conn.ping()

        wall = window(probes, work)
        result = probes.result(N, 1)
        cur.execute("DROP TABLE probe_t")
    finally:
        probes.close()
        conn.close()
    per_op = result["statements_per_op"]
    assert per_op == {"select": 0, "select_for_update": 0, "insert": 1.0, "update": 0,
                      "delete": 0, "other": 0}
    assert result["statements_total"]["insert"] == N
    assert result["commands_per_op"] == {"admin_commands": round(1 / N, 3)}  # the ping
    check_cpu(result, wall)
    assert result["server_peak_rss_mb"] > 10


def test_tarantool_inserts_counted_by_box_stat(tarantool_srv: ServerRecord) -> None:
    target = tarantool_srv.target()
    conn = tarantool.Connection(target.host, target.port, user=target.user,
                                password=target.password)
    probes = CaseProbes(target, "probe_", admin=admin_client)
    try:
        conn.eval("box.schema.space.create('probe_t'):create_index('pk')")
        conn.insert("probe_t", (N, "x"))  # the connector loads the new schema: not counted

        def work() -> None:
            for i in range(N):
                conn.insert("probe_t", (i, "x"))

        wall = window(probes, work)
        result = probes.result(N, 1)
        conn.eval("box.space.probe_t:drop()")
    finally:
        probes.close()
        conn.close()
    assert result["statements_per_op"]["insert"] == 1.0
    assert sum(result["statements_per_op"].values()) == 1.0  # the probe's EVALs left out
    check_cpu(result, wall)


def test_tree_cpu_measures_known_work() -> None:
    """A child burning ~0.3 s of CPU inside the window: counted, through its parent once
    it is reaped."""
    probe = TreeCpu(psutil.Process().pid)
    start = time.perf_counter()
    probe.begin()
    code = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", code], check=True)
    probe.end()
    wall = time.perf_counter() - start
    assert 0.3 <= probe.cpu_s < wall * psutil.cpu_count()


@pytest.mark.parametrize("url,why", [
    ("sqlite://", "embedded"),
    ("postgresql://u@192.0.2.1:5432/x", "another host"),
])
def test_server_not_located(url: str, why: str) -> None:
    pid, how = server_pid(parse_target_url(url))
    assert pid is None and why in how


def test_nothing_listening_is_not_located() -> None:
    pid, how = server_pid(parse_target_url(f"mysql://u@127.0.0.1:{free_port()}/x"))
    assert pid is None and "no process listens" in how


@pytest.mark.parametrize("family, host", [(socket.AF_INET, "127.0.0.1"),
                                          (socket.AF_INET6, "::1")])
def test_the_listener_is_found_through_sock_diag(family: int, host: str) -> None:
    """A socket this process listens on: sock_diag finds it and its owner, as psutil's
    scan of every socket does; a socket that only connects is no listener."""
    with socket.socket(family) as server:
        server.bind((host, 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection((host, port)):
            inodes = sockdiag.listening_inodes(port)
            assert inodes == {os.fstat(server.fileno()).st_ino}
            assert sockdiag.socket_owner(inodes) == os.getpid()
            bracketed = f"[{host}]" if family == socket.AF_INET6 else host
            found = server_pid(parse_target_url(f"mysql://u@{bracketed}:{port}/x"))
            assert found == (os.getpid(), f"process listening on port {port}")
            assert _listener_through_psutil(port) == found


def test_a_shared_listener_is_its_lowest_pid() -> None:
    """A server whose child inherits its listening socket (prefork) is named by the
    parent, the process psutil would list first."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                 pass_fds=[server.fileno()])
        try:
            inodes = sockdiag.listening_inodes(port)
            assert sockdiag.socket_owner(inodes) == min(os.getpid(), child.pid)
        finally:
            child.kill()
            child.wait()


def test_the_tree_is_the_one_psutil_finds() -> None:
    """The kernel's children lists give the same tree as psutil's scan of every process:
    a child, a grandchild started from another thread than the main one, and a child
    of a child that left the tree (its parent exited: it is no longer below)."""
    script = ("import subprocess, threading, time\n"
              "kids = []\n"
              "t = threading.Thread(target=lambda: kids.append(subprocess.Popen("
              "['sleep', '30'])))\n"
              "t.start(); t.join()\n"
              # the background sleep gets no pipe: run() waits for the pipe's last writer
              "orphan = subprocess.run(['sh', '-c', 'sleep 30 >/dev/null 2>&1 & echo $!'],"
              " text=True, capture_output=True).stdout.strip()\n"
              "print('ready', orphan, flush=True); time.sleep(30)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    orphan = None
    try:
        assert parent.stdout is not None
        word, orphan_pid = parent.stdout.readline().split()
        assert word == "ready"
        orphan = psutil.Process(int(orphan_pid))
        found = sorted(p.pid for p in tree(parent.pid))
        root = psutil.Process(parent.pid)
        assert found == sorted([parent.pid, *(p.pid for p in root.children(recursive=True))])
        assert len(found) == 2 and orphan.pid not in found  # the thread's sleep only
    finally:
        for child in [*psutil.Process(parent.pid).children(recursive=True), orphan]:
            if child is not None:
                child.kill()
        parent.kill()
        parent.wait()
