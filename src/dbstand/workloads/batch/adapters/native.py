"""Native bulk-load tools for the batch limit rows: `psql \\copy`, `LOAD DATA LOCAL INFILE`.

They show how far a driver's best API is from the database's own client. Each run
starts the tool, so its process start and login are part of the time (tens of ms):
negligible at the row counts where the limit matters. Passwords travel through the
0600 files (psql's PGPASSFILE, mariadb's option file), never argv or the environment.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbstand.drivers.endpoint import endpoint
from dbstand.errors import CaseFailed
from dbstand.targets.managed import password_for
from dbstand.targets.postgresql.passfile import passfile_env
from dbstand.targets.url import TargetURL

TOOL_TIMEOUT_S = 3600.0


def psql_binary() -> str | None:
    return shutil.which("psql")


def mariadb_binary() -> str | None:
    return shutil.which("mariadb") or shutil.which("mysql")


def write_csv(folder: str, rows: Sequence[Sequence[Any]]) -> str:
    """The insert's rows as CSV (key, value), for the native tools to load."""
    path = Path(folder) / f"batch-{len(rows)}.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return str(path)


def _password(target: TargetURL) -> str:
    return target.password or password_for(target) or ""


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise CaseFailed(f"{what}: {argv[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise CaseFailed(f"{what} timed out after {TOOL_TIMEOUT_S:.0f} s") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no output"]
        raise CaseFailed(f"{what} failed: {lines[-1]}")


def psql_copy(target: TargetURL, table: str, csv_path: str) -> None:
    """`psql \\copy TABLE FROM FILE` (psql runs it in autocommit: committed on return)."""
    psql = psql_binary()
    if psql is None:
        raise CaseFailed("psql \\copy: psql is not installed")
    e = endpoint(target)
    argv = [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", e.host, "-p", str(e.port),
            "-U", e.user, "-d", e.database,
            "-c", f"\\copy {table} (f_key, f_value) FROM '{csv_path}' WITH (FORMAT csv)"]
    with passfile_env(_password(target)) as env:
        _run(argv, {**env, "PGCONNECT_TIMEOUT": "10"}, "psql \\copy")


def mariadb_load_data(target: TargetURL, table: str, csv_path: str) -> None:
    """`LOAD DATA LOCAL INFILE` through the mariadb (or mysql) command-line client."""
    client = mariadb_binary()
    if client is None:
        raise CaseFailed("LOAD DATA LOCAL INFILE: no mariadb/mysql client installed")
    e = endpoint(target)
    with tempfile.TemporaryDirectory(prefix="dbstand-mycnf-") as folder:
        cnf = Path(folder) / "client.cnf"
        fd = os.open(cnf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        password = _password(target).replace("\\", "\\\\").replace('"', '\\"')
        with os.fdopen(fd, "w") as fh:
            fh.write(f'[client]\npassword="{password}"\n')
        argv = [client, f"--defaults-extra-file={cnf}", "--local-infile=1", "--protocol=TCP",
                "-h", e.host, "-P", str(e.port), "-u", e.user, target.database or "",
                "-e", f"LOAD DATA LOCAL INFILE '{csv_path}' INTO TABLE {table} "
                      "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' (f_key, f_value)"]
        _run(argv, {}, "LOAD DATA LOCAL INFILE")
