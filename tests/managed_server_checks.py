"""Checks every managed server kind must pass, shared by tests/targets/test_managed_*.py.

Each kind starts, isolates and stops its server the same way (`ManagedServer`), so
these checks are written once; the test modules pass in what differs: the server
class, how to connect, and which temp dirs are the kind's own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from dbstand.errors import ServerError
from dbstand.targets.managed import ManagedServer, ServerRecord, pid_running

Leftovers = Callable[[], set[str]]
Connect = Callable[[ServerRecord], Any]


def serve(server: ManagedServer, leftovers: Leftovers) -> Iterator[ServerRecord]:
    """Body of a module fixture: run `server`, then check it stopped and left no dir."""
    before = leftovers()
    with server as record:
        yield record
    assert not pid_running(record.pid)
    assert leftovers() <= before, "a temp dir was left behind"


def listens_on_loopback_only(record: ServerRecord) -> None:
    """The server listens on its own port of 127.0.0.1 and nowhere else."""
    listening = [c.laddr for c in psutil.Process(record.pid).net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening)
    assert {addr.port for addr in listening} == {record.port}


@contextmanager
def beside(first_record: ServerRecord, second: ManagedServer, connect: Connect,
           leftovers: Leftovers) -> Iterator[tuple[ServerRecord, Any, Any]]:
    """Run `second` next to the running `first_record`; yield its record and a
    connection to each. Afterwards the second is gone and left no temp dir."""
    before = leftovers()
    with second as other:
        assert other.port != first_record.port and other.pid != first_record.pid
        first, other_conn = connect(first_record), connect(other)
        try:
            yield other, first, other_conn
        finally:
            first.close()
            other_conn.close()
    assert not pid_running(other.pid)
    assert leftovers() <= before


def stop_removes_process_and_dir(server: ManagedServer) -> None:
    """stop() ends the process and removes the base dir; a second stop is harmless."""
    record = server.start()
    try:
        assert pid_running(record.pid) and Path(record.base_dir).is_dir()
    finally:
        server.stop()
    assert not pid_running(record.pid)
    assert not Path(record.base_dir).exists()
    server.stop()


def explicit_port_in_use_is_refused(kind: type[ManagedServer]) -> None:
    """Asking for a port someone else listens on fails at once, naming the port."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} .* in use"):
            kind(port=port)


def failed_start_is_one_clear_line(server: ManagedServer, expected: str,
                                         leftovers: Leftovers) -> None:
    """A server that cannot start says why in one line holding `expected`, and
    leaves no temp dir behind."""
    before = leftovers()
    with pytest.raises(ServerError) as info:
        server.start()
    message = str(info.value)
    assert "\n" not in message
    assert expected in message
    assert leftovers() <= before


def outlives_its_starter(kind: type[ManagedServer], connect: Connect,
                               ping: Callable[[Any], None], timeout_s: float) -> None:
    """`dbstand server up`: a server started by another process keeps running, a
    later process reaches it (`ping` on a connection) and stops it by its record."""
    code = (
        "import json, dataclasses\n"
        f"from {kind.__module__} import {kind.__name__}\n"
        f"record = {kind.__name__}().start()\n"
        "print(json.dumps(dataclasses.asdict(record)))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=timeout_s, check=True).stdout
    record = ServerRecord(**json.loads(out.strip().splitlines()[-1]))
    try:
        assert pid_running(record.pid)
        conn = connect(record)
        try:
            ping(conn)
        finally:
            conn.close()
    finally:
        kind.stop_record(record)
    assert not pid_running(record.pid)
    assert not Path(record.base_dir).exists()
