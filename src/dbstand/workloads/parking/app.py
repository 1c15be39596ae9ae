"""Run a parking implementation as a real HTTP service: the interface that
`dbstand verify parking`, `dbstand run parking` and `dbstand serve parking` use.

`running_service` creates the schema and seed rows if missing (through dbstand's
ownership registry), starts gunicorn on 127.0.0.1 in its own session (its process
tree is the service's CPU), waits until it answers a real request, and always stops
it. Choices where the spec is silent (all implementations share them, logic.py):
- get_service_info: `start_ts`, `duration`, `paid_duration` (tickets) are added to
  `info` for v>=1, `balance` to `info` for v2; "never paid" = PAID_UNTIL_TS still at
  START_TS (also leave_parking's rule).
- create_reservation: v>=1 adds `price` and `info` {start_ts, duration} plus
  `paid_duration: 0` for tickets; the places check applies to new sessions only (a
  ticket holder is already inside); balance - reserved too low: `not_available`.
- cancel_reservation: an unpaid cancel finishes only a session without ticket; a
  consume row is released only while still reserved (also pay_reservation).
- account_transfer locks both accounts in user-id order (no deadlock between
  opposite transfers); stop_service on an order without user: `bad_transaction`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dbstand.errors import MissingDependencyError, ServerError, UserError
from dbstand.sql.ownership import check_prefix
from dbstand.targets.managed import (
    die_with_parent,
    free_port,
    password_for,
    port_in_use,
    wait_for_port,
)
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.parking import db, schema
from dbstand.workloads.parking.functions import BROKEN
from dbstand.workloads.parking.http import CONFIG_ENV

PARKING_STACKS = ("python-raw", "python-sqlalchemy", "python-peewee")

#: modules each implementation needs besides its database driver and gunicorn
_NEEDS = {"python-raw": (), "python-sqlalchemy": ("sqlalchemy",), "python-peewee": ("peewee",)}
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


@dataclass
class ServiceHandle:
    """A running service, as the suite and the measurement see it."""

    stack: str
    base_url: str
    pid: int
    log_path: Path | None
    target: TargetURL
    prefix: str

    def reseed(self) -> None:
        """Restore the seed parks' places (untimed, between batches)."""
        with closing(db.connect(self.target)) as conn:
            schema.reseed(conn, self.prefix)

    def totals(self) -> dict[str, Any]:
        """Consistency figures read from the database (schema.totals)."""
        with closing(db.connect(self.target)) as conn:
            return schema.totals(conn, self.prefix)

    def log_size(self) -> tuple[int, int]:
        """(bytes, lines) of the service log so far; (0, 0) when logging is off."""
        if self.log_path is None or not self.log_path.exists():
            return (0, 0)
        size, lines = 0, 0
        with self.log_path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                size += len(chunk)
                lines += chunk.count(b"\n")
        return (size, lines)


def _check_request(stack: str, broken: str | None, threads: int) -> None:
    if stack not in PARKING_STACKS:
        raise UserError(f"unknown parking stack {stack!r} (known: {', '.join(PARKING_STACKS)})")
    if broken is not None and broken not in BROKEN:
        raise UserError(f"unknown broken switch {broken!r} (known: {', '.join(sorted(BROKEN))})")
    if threads < 1:
        raise UserError(f"--threads must be at least 1, not {threads}")
    import importlib.util

    for module in ("gunicorn", *_NEEDS[stack]):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(f"stack {stack!r} needs {module}, which is not "
                                         "installed (pip install 'dbstand[parking]')")


def _resolve(target: TargetURL | str) -> TargetURL:
    """The target as the server process needs it: password filled in, absolute path."""
    target = parse_target_url(target) if isinstance(target, str) else target
    db.check_target(target)
    if target.kind == "sqlite":
        return replace(target, database=db.sqlite_path(target))
    if target.password is None and (found := password_for(target)) is not None:
        return target.with_password(found)
    return target


def _last_lines(path: Path, n: int = 3) -> str:
    with contextlib.suppress(OSError):
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()
                 if ln.strip()]
        return " | ".join(lines[-n:])
    return ""


def _wait_ready(proc: subprocess.Popen, base_url: str, port: int, errlog: Path) -> None:
    """Wait until the service answers a real (read-only) call."""
    try:
        wait_for_port(port, START_TIMEOUT_S, proc)
        url = f"{base_url}/get_user_account?user_id=0"
        with urllib.request.urlopen(url, timeout=START_TIMEOUT_S) as resp:
            answer = json.loads(resp.read())
        if answer.get("status") != "success":
            raise ServerError(f"answered {answer}")
    except (ServerError, OSError, ValueError) as exc:
        detail = _last_lines(errlog)
        raise ServerError(f"the parking service did not start: {exc}"
                          + (f" ({detail})" if detail else "")) from None


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM gunicorn's master (graceful), SIGKILL its session if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # a worker outliving its master would be an orphan: end the whole session
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextmanager
def running_service(stack: str, target: TargetURL, *, logging: bool = False,
                    port: int | None = None, threads: int = 1, prefix: str = "dbstand_",
                    broken: str | None = None,
                    log_dir: Path | None = None) -> Iterator[ServiceHandle]:
    """Create schema + seed rows if missing (through ownership), start the app server on
    127.0.0.1 (free port unless given; a port in use -> ServerError one line), wait until it
    answers, yield, and always stop it (also on error / Ctrl-C); leaves no process behind.

    `log_dir`: keep the log there (it is otherwise in a temporary dir removed at exit).
    """
    _check_request(stack, broken, threads)
    check_prefix(prefix)
    target = _resolve(target)
    with closing(db.connect(target)) as conn:
        schema.ensure_schema(conn, prefix)
    if port is not None and port_in_use(port):
        raise ServerError(f"port {port} on 127.0.0.1 is in use")
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}"
    workdir = Path(tempfile.mkdtemp(prefix="dbstand-parking-"))
    log_path = None
    if logging:
        folder = log_dir or workdir
        folder.mkdir(parents=True, exist_ok=True)
        log_path = folder / f"parking-{stack}-{time.strftime('%Y%m%dT%H%M%S')}-{port}.log"
    errlog = workdir / "server-stderr.log"
    config = {"stack": stack, "target": target.secret(), "prefix": prefix,
              "log_path": str(log_path) if log_path else None, "threads": threads,
              "broken": [broken] if broken else []}
    cmd = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
           "--workers", "1", "--worker-class", "gthread", "--threads", str(threads),
           "--graceful-timeout", "5", "--timeout", "120", "--keep-alive", "5",
           "--no-control-socket", "--log-level", "warning", "--error-logfile", "-",
           "dbstand.workloads.parking.http:create_app()"]
    proc: subprocess.Popen | None = None
    try:
        with errlog.open("wb") as err:  # gunicorn's messages and failures of requests
            proc = subprocess.Popen(cmd, env={**os.environ, CONFIG_ENV: json.dumps(config)},
                                    cwd=workdir, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True, preexec_fn=die_with_parent)
        _wait_ready(proc, base_url, port, errlog)
        yield ServiceHandle(stack=stack, base_url=base_url, pid=proc.pid, log_path=log_path,
                            target=target, prefix=prefix)
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)
