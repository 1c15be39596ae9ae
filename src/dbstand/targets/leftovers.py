"""What a killed dbstand leaves behind, found and cleared by the next command.

Before anything can outlive dbstand (a throwaway server's data folder, a server
stack's work folder with its password file), the folder is claimed: a small file in
the state folder (`claims/`) names it, and the dbstand process that made it by its
pid AND its start time. The claim goes when the folder is removed as usual (or, for
`server up`, when the server's record takes over). A claim whose dbstand process is
gone (SIGKILL, a crash) is what `sweep()` clears: the processes running from that
folder (or in the session recorded with it) are stopped and the folder removed.
A live dbstand's claims, a concurrent run's, are never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from dbstand.errors import ServerError
from dbstand.paths import state_dir

#: the folder of the claims, in the state folder
CLAIMS = "claims"


def _identity(pid: int) -> str | None:
    from dbstand.targets.managed import process_identity

    return process_identity(pid)


def _folder(create: bool) -> Path:
    return state_dir(create) / CLAIMS


def check_state_folder() -> Path:
    """The state folder, made and writable, or one clear error before anything starts."""
    try:
        folder = _folder(create=True)
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ServerError(f"cannot write dbstand's state folder {state_dir(create=False)}: "
                          f"{exc.strerror or exc} (it keeps what dbstand starts, to stop it "
                          "later; set DBSTAND_HOME to a writable folder)") from None
    return folder


class Claim:
    """One claimed folder; `add_session` records a process group started for it."""

    def __init__(self, folder: Path, what: str):
        self.path = check_state_folder() / f"{os.getpid()}-{time.time_ns()}.json"
        self.data: dict[str, object] = {
            "owner_pid": os.getpid(), "owner_identity": _identity(os.getpid()),
            "folder": str(folder), "what": what, "sessions": []}
        self._write()

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(self.data, fh)
        os.replace(tmp, self.path)

    def add_session(self, pid: int) -> None:
        """A process started in a session of its own (its pid is the session's id)."""
        sessions = self.data["sessions"]
        assert isinstance(sessions, list)
        sessions.append({"pid": pid, "identity": _identity(pid)})
        self._write()

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()


def _owner_alive(data: dict[str, object]) -> bool:
    pid = data.get("owner_pid")
    if not isinstance(pid, int):
        return False
    now = _identity(pid)
    return now is not None and now == data.get("owner_identity")


def _pids_of(folder: str, sessions: list[Any]) -> list[int]:
    """Processes running from `folder` (command line or working folder in it), and
    the members of each recorded session whose leader is still the same process."""
    from dbstand.targets.managed import _cmdline_mentions

    live_sessions = set()
    for session in sessions:
        pid = session.get("pid") if isinstance(session, dict) else None
        if isinstance(pid, int) and session.get("identity") and \
                _identity(pid) == session["identity"]:
            live_sessions.add(pid)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        try:
            in_session = live_sessions and os.getsid(pid) in live_sessions
        except OSError:
            continue
        if in_session or _cmdline_mentions(pid, folder):
            found.append(pid)
    return found


def _stop(pids: list[int]) -> None:
    from dbstand.targets.managed import pid_running

    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        alive = [p for p in pids if pid_running(p)]
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            alive = [p for p in alive if pid_running(p)]
        if not alive:
            return


def sweep() -> list[str]:
    """Clear what killed dbstand processes left; one line per claim cleared."""
    folder = _folder(create=False)
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    said = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or _owner_alive(data):
            continue
        work = str(data.get("folder") or "")
        sessions = data.get("sessions")
        sessions = sessions if isinstance(sessions, list) else []
        pids = _pids_of(work, sessions) if work else []
        _stop(pids)
        removed = False
        if Path(work).name.startswith("dbstand-") and Path(work).is_dir():
            shutil.rmtree(work, ignore_errors=True)
            removed = not Path(work).exists()
        with contextlib.suppress(OSError):
            path.unlink()
        said.append(f"cleared what an earlier dbstand (pid {data.get('owner_pid')}, gone) "
                    f"left of its {data.get('what')}: {len(pids)} process(es) stopped"
                    + (f", {work} removed" if removed else ""))
    return said
