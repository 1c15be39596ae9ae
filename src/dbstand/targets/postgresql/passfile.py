"""The password of a libpq tool (pgbench, psql, createdb) in a 0600 password file
named by PGPASSFILE: never in the tool's environment (readable in /proc by anyone
who may read it) nor on its command line."""

from __future__ import annotations

import contextlib
import os
import pwd
import tempfile
from collections.abc import Iterator
from pathlib import Path


def write_passfile(folder: Path, password: str, owner: str | None = None) -> dict[str, str]:
    """Write `folder/pgpass` (0600, any host, port, database and user: the file serves
    one tool's connection; owned by `owner` when the tool runs as that user) and return
    the environment that names it."""
    path = folder / "pgpass"
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        if owner is not None:
            entry = pwd.getpwnam(owner)
            os.fchown(fh.fileno(), entry.pw_uid, entry.pw_gid)
        fh.write(f"*:*:*:*:{escaped}\n")
    return {"PGPASSFILE": str(path)}


@contextlib.contextmanager
def passfile_env(password: str | None) -> Iterator[dict[str, str]]:
    """The environment for one libpq tool run: PGPASSFILE in a private temporary folder
    removed afterwards; no password, no file."""
    if not password:
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="dbstand-pgpass-") as folder:
        yield write_passfile(Path(folder), password)
