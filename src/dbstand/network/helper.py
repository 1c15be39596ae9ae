"""What the helper programs dbstand runs between the tiers (Toxiproxy, the nginx TLS
terminator) share as managed servers: started as the service user in a session of
their own that dies with dbstand, stopped with their process tree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO

from dbstand.errors import ServerError
from dbstand.targets.managed import (
    ManagedServer,
    ServerRecord,
    parent_death_preexec,
    pid_running,
    stop_process,
)


class HelperServer(ManagedServer):
    """A managed helper program: one child process, `_proc` once started."""

    service_users = ("dbstand", "nobody")

    _proc: subprocess.Popen | None = None

    def _spawn(self, argv: list[str], base_dir: Path, log: IO[bytes] | None = None
               ) -> subprocess.Popen:
        """Start `argv` in `base_dir` as the service user, its output to `log` (None:
        discarded); one ServerError line when the program cannot be started."""
        out = log if log is not None else subprocess.DEVNULL
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
                cwd=str(base_dir), start_new_session=True, preexec_fn=parent_death_preexec(),
                user=self.run_as)
        except OSError as exc:
            raise ServerError(f"cannot start {argv[0]}: {exc.strerror}") from None
        return self._proc

    def _stop(self, record: ServerRecord) -> None:
        if pid_running(record.pid):
            stop_process(record.pid, self._proc, timeout_s=10.0)


def last_line(path: Path) -> str:
    """The last line of a server's log, for a one-line error."""
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line]
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "empty log"
