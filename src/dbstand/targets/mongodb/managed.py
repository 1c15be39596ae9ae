"""MongoDB-wire target: the managed throwaway FerretDB server and server facts.

MongoDB itself is not in Debian. FerretDB 1.x (Apache-2.0) speaks the MongoDB wire
protocol and keeps documents in SQLite or PostgreSQL; dbstand builds it with the
ordinary Go toolchain from the module proxy (the small program in `ferretdb/`, pinned
by its go.sum), once per machine and user, into the user's cache folder. Every
result names the stand-in ("FerretDB 1.24.0, SQLite backend"), never "MongoDB".

Settings: `backend` = `sqlite` (default: a data folder in the server's temp dir) or
`postgresql` with `postgresql_url` (its password, if any, goes to FerretDB in a file
of the temp dir, never on its command line, and is not recorded). The server has no
authentication: clients connect to `mongodb://127.0.0.1:PORT/dbstand` without a
user (with the PostgreSQL backend FerretDB uses the URL's credentials).
"""

from __future__ import annotations

import os
import pwd
import re
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from dbstand.errors import ServerError
from dbstand.targets.gobuild import GoProgram, reachable_copy
from dbstand.targets.managed import (
    LOOPBACK,
    ManagedServer,
    ServerRecord,
    chown_tree,
    password_for,
    pid_running,
    stop_process,
)
from dbstand.targets.url import parse_target_url

#: the Go program that embeds FerretDB (main.go, go.mod, go.sum), built and cached once
PROGRAM = GoProgram("ferretdb", "FerretDB", Path(__file__).resolve().parent / "ferretdb",
                    "DBSTAND_FERRETDB_BIN")

BACKENDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
DEFAULT_SETTINGS: dict[str, Any] = {"backend": "sqlite", "log_level": "warn"}
KNOWN_SETTINGS = ("backend", "postgresql_url", "log_level")

_GO_FRAMES = re.compile(r"^(\[[^\]]*\]\s*)+")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


def ferretdb_binary(*, quiet: bool = False) -> Path:
    """The FerretDB program, built on first use into the cache folder
    ($DBSTAND_FERRETDB_BIN names a ready-made one instead)."""
    return PROGRAM.binary(quiet=quiet)


def ferretdb_version(binary: Path) -> str:
    """"FerretDB 1.24.0", as the program reports the module it was built from."""
    return PROGRAM.version(binary)


class ManagedFerretDB(ManagedServer):
    """A throwaway FerretDB on 127.0.0.1 (SQLite or PostgreSQL backend), no auth."""

    kind = "mongodb"
    #: FerretDB runs fine as root, but a network server should not when it need not
    service_users = ("dbstand", "nobody")

    _proc: subprocess.Popen | None = None

    def _start(self, base_dir: Path) -> ServerRecord:
        settings = {**DEFAULT_SETTINGS, **self.settings}
        unknown = sorted(set(settings) - set(KNOWN_SETTINGS))
        if unknown:
            raise ServerError(f"unknown FerretDB setting(s) {', '.join(unknown)} "
                              f"(known: {', '.join(KNOWN_SETTINGS)})")
        backend = str(settings["backend"])
        if backend not in BACKENDS:
            raise ServerError(f"FerretDB backend {backend!r}: use sqlite or postgresql")
        if self.bind != LOOPBACK:  # ferretdb/main.go listens on 127.0.0.1 only
            raise ServerError(f"the managed FerretDB listens on {LOOPBACK} only, not "
                              f"{self.bind}")
        built = ferretdb_binary()
        version = ferretdb_version(built)
        log_path = base_dir / "server.log"
        log_path.touch()
        argv = ["-port", str(self.port), "-handler", backend,
                "-log-level", str(settings["log_level"])]
        recorded: dict[str, Any] = {"backend": backend, "listen": f"127.0.0.1:{self.port}"}
        if backend == "sqlite":
            argv += ["-sqlite-dir", str(base_dir / "data")]
            recorded["sqlite_dir"] = str(base_dir / "data")
        else:
            url_text = settings.get("postgresql_url")
            if not url_text:
                raise ServerError("the postgresql backend needs the setting postgresql_url")
            pg_url, password = _split_password(str(url_text))
            argv += ["-postgresql-url", pg_url]
            recorded["postgresql_url"] = pg_url
            if password is not None:
                secret = base_dir / "pg.password"
                fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(password)
                argv += ["-postgresql-password-file", str(secret)]
        chown_tree(base_dir, self.run_as)
        os.chmod(base_dir, 0o700)
        binary = self._reachable_binary(built, base_dir)
        with open(log_path, "ab") as log_fh:
            try:
                self._proc = subprocess.Popen(
                    [str(binary), *argv], stdin=subprocess.DEVNULL, stdout=log_fh,
                    stderr=subprocess.STDOUT, cwd=str(base_dir), start_new_session=True,
                    **_user_args(self.run_as))
            except OSError as exc:
                raise ServerError(f"cannot start {binary}: {exc.strerror}") from None
        try:
            facts = _wait_ready(self.port, self._proc, log_path, START_TIMEOUT_S)
        except BaseException:
            stop_process(self._proc.pid, self._proc, sig=signal.SIGKILL)
            raise
        number = version.removeprefix("FerretDB ")
        recorded.update({
            "server": f"{version}, {BACKENDS[backend]} backend",
            "ferretdb_version": number,
            "mongodb_version": facts.get("version", "unknown"),
            "max_wire_version": facts.get("maxWireVersion"),
            "binary": str(built),
            "log_level": str(settings["log_level"]),
        })
        return ServerRecord(
            kind=self.kind, pid=self._proc.pid, port=self.port,
            url=f"mongodb://127.0.0.1:{self.port}/dbstand", password="",
            base_dir=str(base_dir), log_path=str(log_path), run_as=self.run_as,
            settings=recorded,
        )

    def _reachable_binary(self, built: Path, base_dir: Path) -> Path:
        """The program as the service user can run it (the cache may sit in a home
        the service user cannot enter)."""
        return built if self.run_as is None else reachable_copy(built, base_dir)

    def _stop(self, record: ServerRecord) -> None:
        pid = record.pid
        if not _is_our_server(pid, record.base_dir):
            return
        stop_process(pid, self._proc, timeout_s=STOP_TIMEOUT_S)


def _split_password(url_text: str) -> tuple[str, str | None]:
    """(URL without password, password) for FerretDB's PostgreSQL backend; the password
    of a `dbstand server up` PostgreSQL is found when the URL has none.

    `synchronize_seqscans=off` is added (a session setting FerretDB's driver passes
    on) unless the URL sets it: natural order is heap order there, and a synchronized
    scan may start mid-table on a big table while another full scan runs, which
    would change what `find(limit=30)` returns.
    """
    target = parse_target_url(url_text)
    if target.kind != "postgresql":
        raise ServerError(f"postgresql_url {target.redacted()} is not a postgresql:// URL")
    password = target.password if target.password is not None else password_for(target)
    if target.option("synchronize_seqscans") is None:
        target = replace(target, query=(*target.query, ("synchronize_seqscans", "off")))
    return target.with_password(None).redacted(), password


def _user_args(user: str | None) -> dict[str, Any]:
    """Popen arguments that drop to the service user with its own groups only."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _mongo_client(port: int, timeout_ms: int) -> Any:
    try:
        import pymongo
    except ImportError:
        raise ServerError("the managed FerretDB needs pymongo to check it is ready: "
                          "pip install 'dbstand[mongodb]'") from None
    return pymongo.MongoClient(
        host="127.0.0.1", port=port, directConnection=True, connect=False,
        serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
        socketTimeoutMS=max(timeout_ms, 5000), appname="dbstand-ready")


def _wait_ready(port: int, proc: subprocess.Popen, log_path: Path,
                timeout_s: float) -> dict[str, Any]:
    """Wait until FerretDB answers `hello` and reaches its backend; its buildInfo.

    An open port is not enough: the backend (a PostgreSQL that refuses the password,
    say) is reached only by a command that touches storage, hence listCollections.
    """
    from pymongo.errors import OperationFailure, PyMongoError

    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"FerretDB exited with code {proc.returncode} before it was "
                              f"ready: {last_log_line(log_path)}")
        client = _mongo_client(port, 500)
        try:
            hello = client.admin.command("hello")
            if "maxWireVersion" not in hello:
                raise ServerError(f"something other than FerretDB answers on 127.0.0.1:{port}")
            client.dbstand.list_collection_names()
            info = client.admin.command("buildInfo")
            return {"version": info.get("version"), "maxWireVersion": hello["maxWireVersion"]}
        except OperationFailure as exc:
            # the server is up but its backend says no: waiting will not help
            raise ServerError(f"FerretDB cannot use its backend: {_backend_reason(exc)}"
                              ) from None
        except PyMongoError as exc:
            last = _first_line(exc)
        finally:
            client.close()
        time.sleep(0.1)
    raise ServerError(f"FerretDB did not answer on 127.0.0.1:{port} within {timeout_s:.0f} s "
                      f"({last}): {last_log_line(log_path)}")


def _backend_reason(exc: Any) -> str:
    """The why of a FerretDB error, without its Go call-stack prefix: the first line
    ("failed to connect to ...") and the last (the PostgreSQL message)."""
    message = str((getattr(exc, "details", None) or {}).get("errmsg") or exc)
    message = _GO_FRAMES.sub("", message)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    text = lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
    return text[:400]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def last_log_line(log_path: Path | str) -> str:
    """The line of FerretDB's log that says why it failed: the last error, else the last."""
    try:
        lines = Path(log_path).read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return "no server log"
    lines = [line.strip() for line in lines if line.strip()]
    errors = [line for line in lines if "level=ERROR" in line or line.startswith("ferretdb:")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else "empty server log"


def _is_our_server(pid: int, base_dir: str) -> bool:
    """Whether `pid` is still the FerretDB of `base_dir` (guards against pid reuse)."""
    if not pid_running(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust the record
    words = [word.decode(errors="replace") for word in cmdline]
    return "-handler" in words and any(word.startswith(f"{base_dir}/") for word in words)


def server_facts(client: Any) -> dict[str, Any]:
    """What a MongoDB-wire server says it is, through a pymongo client.

    FerretDB answers with a MongoDB version (7.0.42) for drivers' feature checks;
    `ferretdbVersion` tells it apart (the embedded build reports "unknown" there,
    the managed server's record has the real one).
    """
    info = client.admin.command("buildInfo")
    hello = client.admin.command("hello")
    facts: dict[str, Any] = {"version": info.get("version"),
                             "maxWireVersion": hello.get("maxWireVersion")}
    if "ferretdbVersion" in info:
        facts["server"] = "FerretDB"
        facts["ferretdbVersion"] = info["ferretdbVersion"]
    else:
        facts["server"] = "MongoDB"
    return facts
