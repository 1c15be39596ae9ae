"""SQLite's run lock: an exclusive `flock` on a lock file next to the database
(`<database>.<prefix>lock`), removed at the end. An in-memory database is private to
its process and needs none."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dbstand.errors import TargetError
from dbstand.targets.run_lock import busy
from dbstand.targets.sqlite.path import path_of
from dbstand.targets.url import TargetURL


def sqlite_lock_path(target: TargetURL, prefix: str) -> Path:
    return Path(f"{path_of(target)}.{prefix}lock")


@contextlib.contextmanager
def hold(target: TargetURL, prefix: str, connect: Callable[[], Any]) -> Iterator[None]:
    """`connect` is not used: the lock is a file beside the database."""
    if target.is_memory:
        yield
        return
    path = sqlite_lock_path(target, prefix)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise TargetError(f"cannot use {target.redacted()}: cannot create the lock file "
                              f"{path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = os.read(fd, 64).decode().strip()
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise busy(target, prefix, f"lock file {path}"
                            + (f", process {holder}" if holder else "")) from None
            raise
        # the file may have been removed by the run that just ended: lock the one on disk
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)
