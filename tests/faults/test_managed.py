"""Managed servers: a stale record never gets another program signalled, for every
managed kind (the check is in the base class); `server up` over a stale record cleans
its data folder up; a port no TCP port can be is one line (issue 17, items 2, 8, 11)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbstand.targets.kinds import all_kinds
from dbstand.targets.managed import (
    ManagedServer,
    ServerRecord,
    load_record,
    process_identity,
    record_alive,
    save_record,
)

from .helpers import one_error_line, orphans, run_tagged

MANAGED = sorted(k.name for k in all_kinds().values() if k.managed)


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """Another program, whose pid a stale record names."""
    proc = subprocess.Popen(["sleep", "300"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _stale_record(kind: str, pid: int, *, identity: str | None) -> ServerRecord:
    base = Path(tempfile.mkdtemp(prefix=f"dbstand-{kind}-"))
    (base / "data").mkdir()
    (base / "data" / "file").write_text("old data")
    return ServerRecord(kind=kind, pid=pid, port=1, url=f"{_scheme(kind)}://u@127.0.0.1:1/db",
                        password="pw", base_dir=str(base), log_path=str(base / "log"),
                        pid_identity=identity)


def _scheme(kind: str) -> str:
    return next(k for k in all_kinds().values() if k.name == kind).schemes[0]


@pytest.mark.parametrize("kind", MANAGED)
@pytest.mark.parametrize("format", ["with identity", "older record, no identity"])
def test_down_on_a_stale_record_signals_nobody(kind: str, format: str,
                                               bystander: subprocess.Popen[bytes]) -> None:
    """The recorded pid now belongs to `sleep`: `server down` leaves it alone, removes
    the dead server's folder and record, and says what happened."""
    identity = "another-boot:12345" if format == "with identity" else None
    record = _stale_record(kind, bystander.pid, identity=identity)
    save_record(record)
    assert not record_alive(record)
    result, tag = run_tagged("server", "down", kind, timeout=120)
    assert result.code == 0, result.stderr
    assert "no longer running" in result.stdout
    assert bystander.poll() is None, "a foreign process was signalled"
    assert not Path(record.base_dir).exists()
    assert load_record(kind) is None
    assert orphans(tag) == []


@pytest.mark.parametrize("kind", MANAGED)
def test_the_base_class_stops_only_its_own_process(kind: str,
                                                   bystander: subprocess.Popen[bytes]) -> None:
    """`ManagedServer.stop_record`, which every kind inherits (the MongoDB one too),
    checks the process's identity before any signal."""
    cls: type[ManagedServer] = next(k for k in all_kinds().values()
                                    if k.name == kind).load("managed")
    record = _stale_record(kind, bystander.pid, identity="x:1")
    cls.stop_record(record)
    assert bystander.poll() is None
    assert not Path(record.base_dir).exists()


def test_identity_tells_a_process_from_a_later_one(bystander: subprocess.Popen[bytes]) -> None:
    record = _stale_record("postgresql", bystander.pid,
                           identity=process_identity(bystander.pid))
    try:
        assert record.pid_identity and record_alive(record)
        record.pid_identity = "x:1"
        assert not record_alive(record)
    finally:
        shutil.rmtree(record.base_dir)


def test_up_over_a_stale_record_removes_its_data(bystander: subprocess.Popen[bytes]) -> None:
    """The old folder goes before the new server starts (here it cannot: its port is
    taken, which is refused in one line after the clean-up)."""
    import socket

    record = _stale_record("postgresql", bystander.pid, identity="x:1")
    save_record(record)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result, tag = run_tagged("server", "up", "postgresql", "--port", str(port),
                                 timeout=120)
    assert result.code == 2
    assert f"port {port} on 127.0.0.1 is in use" in one_error_line(result)
    assert "no longer running" in result.stdout
    assert not Path(record.base_dir).exists()
    assert load_record("postgresql") is None
    assert bystander.poll() is None
    assert orphans(tag) == []


@pytest.mark.parametrize("argv", [
    ["server", "up", "tarantool", "--port", "99999"],
    ["server", "up", "postgresql", "--port", "0"],
    ["serve", "parking", "--stack", "python-raw", "--target", "sqlite:///{tmp}/p.db",
     "--port", "99999"],
])
def test_a_port_no_tcp_port_can_be_is_one_line(argv: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    result, tag = run_tagged(*args, timeout=120)
    assert result.code == 2
    assert "must be a TCP port from 1 to 65535" in one_error_line(result)
    assert orphans(tag) == []


def test_cleanup_never_removes_a_folder_dbstand_did_not_make(tmp_path: Path) -> None:
    """A record naming some other folder (edited, corrupt) never gets it deleted."""
    from dbstand.targets.postgresql.managed import ManagedPostgres

    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep").write_text("x")
    record = ServerRecord(kind="postgresql", pid=2**22 + 7, port=1,
                          url="postgresql://u@127.0.0.1:1/db", password="",
                          base_dir=str(precious), log_path="", pid_identity="x:1")
    ManagedPostgres.stop_record(record)
    assert (precious / "keep").exists()
    assert os.path.isdir(precious)
