"""Run any server stack: build if stale, start on 127.0.0.1 (or a given bind address),
wait for health, stop.

The stack runs in a session of its own, so its whole process tree (Apache's
children, a JVM, a php-fpm pool, gunicorn's workers) is one group: CPU and RSS are
read over that tree, and stopping sends SIGTERM to the group, then SIGKILL after a
grace period, then kills any descendant that left the group. This runs on normal
exit, on an error and on Ctrl-C; the kernel's parent-death signal covers a SIGKILL
of dbstand itself. The database password reaches the stack as a file readable by
this user only, never in the environment or on a command line.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from dbstand.errors import ServerError
from dbstand.profiles import perf_map
from dbstand.stacks.build import ensure_built, python_for
from dbstand.stacks.manifest import Manifest
from dbstand.targets.leftovers import Claim, check_state_folder
from dbstand.targets.managed import (
    bind_address,
    die_with_parent,
    free_port,
    password_for,
    port_in_use,
)
from dbstand.targets.url import TargetURL

STOP_GRACE_S = 10.0
HOST = "127.0.0.1"


@dataclass
class StackHandle:
    """A running server stack, as workloads and probes see it."""

    manifest: Manifest
    port: int
    pid: int
    work_dir: Path
    log_path: Path | None
    build_dir: Path
    #: every process seen in the tree, pid -> start time (a reused pid is not ours)
    descendants: dict[int, float] = field(default_factory=dict)
    #: the address it listens on (DBSTAND_HOST): 127.0.0.1 unless `running_stack`'s bind
    host: str = HOST

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_size(self) -> tuple[int, int]:
        """(bytes, lines) the stack's request log holds so far; (0, 0) with logging off."""
        if self.log_path is None or not self.log_path.exists():
            return (0, 0)
        size = lines = 0
        with self.log_path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                size += len(chunk)
                lines += chunk.count(b"\n")
        return (size, lines)

    def alive(self) -> bool:
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def remember_tree(self) -> None:
        """Note every process of the tree now, so that stop finds one that left it."""
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    self.descendants[child.pid] = child.create_time()


def stack_env(manifest: Manifest, *, port: int, work_dir: Path, build: Path,
              target: TargetURL | None, prefix: str, logging: bool, log_path: Path | None,
              workers: int | None, static_dir: Path | None,
              host: str = HOST) -> dict[str, str]:
    """The environment of docs/stack-manifest.md (the password goes to a file)."""
    env = {**os.environ, **manifest.start.env,
           "DBSTAND_HOST": host, "DBSTAND_PORT": str(port),
           "DBSTAND_WORKERS": str(workers or os.cpu_count() or 1),
           "DBSTAND_LOGGING": "1" if logging else "0",
           "DBSTAND_STACK_DIR": str(manifest.folder), "DBSTAND_BUILD_DIR": str(build),
           "DBSTAND_WORK_DIR": str(work_dir), "DBSTAND_PREFIX": prefix,
           "DBSTAND_PYTHON": python_for(manifest, build)}
    if log_path is not None:
        env["DBSTAND_LOG_FILE"] = str(log_path)
    if static_dir is not None:
        env["DBSTAND_STATIC_DIR"] = str(static_dir)
    if target is not None:
        env.update(target_env(target, work_dir))
    return env


def target_env(target: TargetURL, work_dir: Path) -> dict[str, str]:
    """DBSTAND_DB_*: where the database is; the password in a 0600 file."""
    env = {"DBSTAND_DB_KIND": target.kind, "DBSTAND_DB_URL": target.redacted()}
    if target.is_file:
        env["DBSTAND_DB_NAME"] = str(target.database or "")
        return env
    env.update({"DBSTAND_DB_HOST": target.host or HOST,
                "DBSTAND_DB_PORT": str(target.port or ""),
                "DBSTAND_DB_NAME": target.database or "",
                "DBSTAND_DB_USER": target.user or ""})
    password = target.password if target.password is not None else password_for(target)
    secret = work_dir / "db-password"
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(password or "")
    env["DBSTAND_DB_PASSWORD_FILE"] = str(secret)
    return env


def _log_tail(path: Path, lines: int = 8) -> str:
    with contextlib.suppress(OSError):
        kept = [ln.strip() for ln in path.read_text(errors="replace").splitlines()
                if ln.strip()]
        return " | ".join(kept[-lines:])
    return ""


def _health_status(host: str, port: int, path: str) -> int | None:
    conn = http.client.HTTPConnection(host, port, timeout=2.0)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def wait_healthy(handle: StackHandle, proc: subprocess.Popen, timeout_s: float,
                 server_log: Path) -> None:
    """Poll the health URL until it answers 200; a dead process or the time limit is a
    ServerError naming the stack, with the tail of its log."""
    deadline = time.monotonic() + timeout_s
    status: int | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"stack {handle.manifest.name!r} exited with code "
                              f"{proc.returncode} before it was healthy: "
                              f"{_log_tail(server_log)}")
        status = _health_status(handle.host, handle.port, handle.manifest.health_path)
        if status == 200:
            handle.remember_tree()
            return
        time.sleep(0.1)
    seen = f"last answer HTTP {status}" if status else "no answer"
    raise ServerError(f"stack {handle.manifest.name!r} was not healthy on "
                      f"{handle.base_url}{handle.manifest.health_path} within "
                      f"{timeout_s:.0f} s ({seen}): {_log_tail(server_log)}")


def stop_tree(handle: StackHandle, proc: subprocess.Popen) -> None:
    """SIGTERM the stack's session, SIGKILL what lingers, then any descendant that
    left the session; return once every process of the tree is gone (no orphan)."""
    handle.remember_tree()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    ours = []
    for pid, started in handle.descendants.items():
        with contextlib.suppress(psutil.Error):
            child = psutil.Process(pid)
            if child.create_time() == started:
                child.kill()
                ours.append(child)
    _, alive = psutil.wait_procs(ours, timeout=5)
    for pid in (proc.pid, *handle.descendants):  # JIT symbol maps of a profiled run
        with contextlib.suppress(OSError):
            perf_map(pid).unlink(missing_ok=True)
    if alive:
        raise ServerError(f"stack {handle.manifest.name!r}: processes "
                          f"{', '.join(str(p.pid) for p in alive)} survived SIGKILL")


@contextmanager
def running_stack(manifest: Manifest, *, target: TargetURL | None = None,
                  port: int | None = None, logging: bool = False, workers: int | None = None,
                  prefix: str = "dbstand_", static_dir: Path | None = None,
                  log_dir: Path | None = None, extra_env: dict[str, str] | None = None,
                  bind: str = HOST) -> Iterator[StackHandle]:
    """Build (if stale), start, wait for health, yield, and always stop the stack.

    `bind`: the address it listens on, loopback or one this process owns inside a
    network namespace (targets/managed.py `bind_address`; anything else: ServerError)."""
    bind = bind_address(bind)
    build = ensure_built(manifest)
    if port is not None and port_in_use(port, bind):
        raise ServerError(f"port {port} on {bind} is in use")
    port = port or free_port(bind)
    check_state_folder()
    work_dir = Path(tempfile.mkdtemp(prefix=f"dbstand-{manifest.name}-"))
    work_dir.chmod(0o755)  # servers that drop privileges read their configs here
    claim: Claim | None = None
    log_path = None
    if logging:
        folder = log_dir or work_dir
        folder.mkdir(parents=True, exist_ok=True)
        log_path = folder / f"{manifest.name}-{time.strftime('%Y%m%dT%H%M%S')}-{port}.log"
    server_log = work_dir / "server-output.log"
    proc: subprocess.Popen | None = None
    handle: StackHandle | None = None
    try:
        claim = Claim(work_dir, f"stack {manifest.name}")  # found if dbstand is killed
        env = stack_env(manifest, port=port, work_dir=work_dir, build=build, target=target,
                        prefix=prefix, logging=logging, log_path=log_path, workers=workers,
                        static_dir=static_dir, host=bind)
        env.update(extra_env or {})
        argv = manifest.start.resolved(manifest.folder)
        with server_log.open("wb") as out:
            try:
                proc = subprocess.Popen(argv, cwd=work_dir, env=env, stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True, preexec_fn=die_with_parent)
            except OSError as exc:
                raise ServerError(f"stack {manifest.name!r}: cannot run {argv[0]}: "
                                  f"{exc.strerror}") from None
        claim.add_session(proc.pid)
        handle = StackHandle(manifest=manifest, port=port, pid=proc.pid, work_dir=work_dir,
                             log_path=log_path, build_dir=build, host=bind)
        wait_healthy(handle, proc, manifest.start.timeout_s, server_log)
        yield handle
    finally:
        if proc is not None:
            stop_tree(handle or StackHandle(manifest, port, proc.pid, work_dir, log_path,
                                            build, host=bind), proc)
        shutil.rmtree(work_dir, ignore_errors=True)
        if claim is not None:
            claim.release()
