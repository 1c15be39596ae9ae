"""Managed servers: throwaway database servers on 127.0.0.1 that dbstand starts and stops.

A managed server lives in its own temporary directory, listens on a free loopback
port and leaves nothing behind when stopped. Its bind address is 127.0.0.1 unless the
caller gives another (`bind_address`): a loopback address, or one the caller owns
inside a network namespace of its own (tests/network/test_namespaces.py), never an
address of the machine's own network. Used two ways:
- as a context manager (tests, a run with a managed target): stopped on exit, on
  error and on Ctrl-C;
- by `dbstand server up/down/status`: the server outlives the command and its record
  (pid, port, data dir, password) is kept in dbstand's state dir, readable by its
  owner only, so that later commands can find and stop it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from dbstand.errors import ServerError
from dbstand.paths import state_dir
from dbstand.targets.url import TargetURL, parse_target_url


@dataclass
class ServerRecord:
    """What is known about a running managed server."""

    kind: str
    pid: int
    port: int
    url: str  # without password
    password: str = field(repr=False)
    base_dir: str
    log_path: str
    run_as: str | None = None
    started_at: float = field(default_factory=time.time)
    settings: dict[str, Any] = field(default_factory=dict)
    #: who `pid` was when the server started (boot id and start time, process_identity):
    #: a stale record whose pid now belongs to another program is never signalled
    pid_identity: str | None = None

    def target(self) -> TargetURL:
        """The URL with the password filled in, for connecting."""
        return parse_target_url(self.url).with_password(self.password or None)


LOOPBACK = "127.0.0.1"


def _own_netns() -> bool:
    """Whether this process runs in a named network namespace (`ip netns add`, listed in
    /run/netns), not the machine's own network; False when that cannot be told."""
    try:
        mine = os.stat("/proc/self/ns/net")
        named = list(Path("/run/netns").iterdir())
    except OSError:
        return False
    for path in named:
        with contextlib.suppress(OSError):
            ns = path.stat()
            if (ns.st_dev, ns.st_ino) == (mine.st_dev, mine.st_ino):
                return True
    return False


def bind_address(address: str) -> str:
    """`address` if a managed server or stack may listen on it: a loopback address, or
    an address of this process's own interfaces inside a named network namespace (`ip
    netns add`: traffic then stays in namespaces the caller made); ServerError else."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ServerError(f"bind address {address!r} is not an IP address") from None
    if ip.is_loopback:
        return address
    if not _own_netns():
        raise ServerError(f"bind address {address} refused: only a loopback address, or an "
                          "address owned inside a network namespace (ip netns exec)")
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, 0))
        except OSError:
            raise ServerError(f"bind address {address} refused: no interface of this "
                              "network namespace has it") from None
    return address


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port on `host` that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    """Whether a server could not listen on host:port now (as servers bind: with
    SO_REUSEADDR, so a port whose last connections linger in TIME_WAIT is free).

    A number no TCP port can be is one clear error (every command taking a --port ends
    up here), not an OverflowError."""
    if not 1 <= port <= 65535:
        raise ServerError(f"--port must be a TCP port from 1 to 65535, not {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
        return False


def wait_for_port(port: int, timeout_s: float, proc: subprocess.Popen | None = None,
                  host: str = LOOPBACK) -> None:
    """Wait until something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServerError(f"server exited with code {proc.returncode} before listening")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.2)
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise ServerError(f"server did not listen on {host}:{port} within {timeout_s:.0f} s")


def read_greeting(port: int, timeout_s: float, proc: subprocess.Popen | None = None,
                  host: str = LOOPBACK) -> bytes:
    """The first bytes a server sends on host:port, for protocols where it speaks first.

    Stronger than `wait_for_port` (MySQL, Tarantool): the server greets only once it
    serves clients, not merely once it is bound, and a greeting tells our server from
    another program listening on the port. Watches `proc` so that a server that
    died is reported at once.
    """

    def check_alive() -> None:
        if proc is not None and proc.poll() is not None:
            raise ServerError(f"server exited with code {proc.returncode} before it was ready")

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        check_alive()
        try:
            sock = socket.create_connection((host, port), timeout=0.5)
        except OSError:
            time.sleep(0.05)
            continue
        with sock:
            sock.settimeout(0.25)
            while time.monotonic() < deadline:
                check_alive()
                try:
                    data = sock.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                return data
        time.sleep(0.05)
    raise ServerError(f"server did not answer on {host}:{port} within {timeout_s:.0f} s")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_running(pid: int) -> bool:
    """Alive and not a zombie.

    A detached server outlives the process that started it; when it later exits,
    nobody may reap it (PID 1 in containers often does not), and `pid_alive` would
    report the zombie as alive forever.
    """
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): trust kill(0)
    return state not in ("Z", "X")


def process_identity(pid: int) -> str | None:
    """What tells this process from a later one given the same pid: the boot's id and
    the process's start time (clock ticks since boot). None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        with open("/proc/sys/kernel/random/boot_id") as fh:
            boot = fh.read().strip()
        return f"{boot}:{fields[19]}"  # field 22 of stat(5), counted after the name
    except (OSError, IndexError):
        return None


def _cmdline_mentions(pid: int, folder: str) -> bool | None:
    """Whether `pid`'s command line or working directory lies in `folder`; None
    without /proc."""
    if not Path("/proc/self").exists():
        return None
    base = folder.rstrip("/") + "/"
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if any(base.encode() in word or word == folder.encode() for word in words):
        return True
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return cwd == folder or cwd.startswith(base)


def record_alive(record: ServerRecord) -> bool:
    """Whether the record's server still runs: its pid runs, and is the same process
    (its identity matches; records written before identities: its command line or
    working directory is in the server's folder)."""
    if not pid_running(record.pid):
        return False
    if record.pid_identity:
        now = process_identity(record.pid)
        return now is None or now == record.pid_identity
    return _cmdline_mentions(record.pid, record.base_dir) is not False


def wait_pid_exit(pid: int, timeout_s: float) -> bool:
    """Wait until `pid` has exited (reaping it if it is our child); False on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if not pid_running(pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def stop_process(pid: int, proc: subprocess.Popen | None = None, *,
                 sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> None:
    """Signal a server, wait for it to exit, SIGKILL it after `timeout_s`.

    `proc`: its Popen when this process started it, so that it is reaped through
    Popen (no ResourceWarning). Raises ServerError if even SIGKILL does not end it.
    """

    def wait(seconds: float) -> bool:
        if proc is not None and proc.pid == pid:
            try:
                proc.wait(seconds)
            except subprocess.TimeoutExpired:
                return False
            return True
        return wait_pid_exit(pid, seconds)

    for signum, seconds in ((sig, timeout_s), (signal.SIGKILL, 10.0)):
        if not pid_running(pid):
            wait(0)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
        if wait(seconds):
            return
    raise ServerError(f"process {pid} did not stop, even after SIGKILL")


def terminate_pid(pid: int, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> None:
    """Signal a process and wait for it to go; SIGKILL it if it lingers."""
    if not pid_running(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if not pid_running(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def parent_death_preexec() -> Callable[[], None]:
    """`die_with_parent` for a child that drops to a service user: libc is loaded here,
    in the parent, because after the drop the child may not read Python's own files
    (a root-only installation) to import ctypes."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None

    def preexec() -> None:
        prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG

    return preexec


def die_with_parent() -> None:
    """`preexec_fn` for child servers that must not outlive dbstand even if it is
    SIGKILLed (Linux PR_SET_PDEATHSIG; elsewhere a no-op)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def service_user(preferred: tuple[str, ...]) -> str | None:
    """When running as root, the unprivileged account to run a server as.

    Database servers refuse to run as root (initdb, mariadbd); the first of
    `preferred` that exists is used. Not root: None (run as ourselves).
    """
    if os.geteuid() != 0:
        return None
    for name in preferred:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise ServerError(
        f"running as root and none of the users {', '.join(preferred)} exists: "
        "create one (e.g. `useradd --system postgres`) or run dbstand as a normal user"
    )


def chown_tree(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for root, dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in dirs + files:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


def registry_path(kind: str, create: bool = False) -> Path:
    """Where the record of a managed `kind` server is kept; the folder is made only
    for writing (reading needs none, so a read-only state folder can still be read)."""
    path = state_dir(create) / "servers"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path / f"{kind}.json"


class CorruptRecord(ServerError):
    """A record file that cannot be read as one (garbage, empty, wrong types)."""

    def __init__(self, kind: str, path: Path):
        super().__init__(f"the record of the managed {kind} server is corrupt: {path} "
                         f"(`dbstand server down {kind}` removes it; or delete that file)")
        self.kind, self.path = kind, path


#: the type every field of a record must have (others are optional)
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "kind": str, "pid": int, "port": int, "url": str, "password": str, "base_dir": str,
    "log_path": str, "run_as": (str, type(None)), "started_at": (int, float),
    "settings": dict, "pid_identity": (str, type(None))}


def load_record(kind: str) -> ServerRecord | None:
    """The record of the managed `kind` server; CorruptRecord if it cannot be one."""
    path = registry_path(kind)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or any(
                k in data and (not isinstance(data[k], t) or isinstance(data[k], bool))
                for k, t in _FIELD_TYPES.items()):
            raise TypeError
        return ServerRecord(**data)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise CorruptRecord(kind, path) from None
    except OSError as exc:
        raise ServerError(f"cannot read the record of the managed {kind} server {path}: "
                          f"{exc.strerror}") from None


def save_record(record: ServerRecord) -> None:
    path = registry_path(record.kind, create=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(asdict(record), fh, indent=2)
    os.replace(tmp, path)


def forget_record(kind: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        registry_path(kind).unlink()


def all_records(corrupt: list[CorruptRecord] | None = None) -> list[ServerRecord]:
    """Every readable record; the corrupt ones are skipped (collected in `corrupt`),
    so one bad file never hides the others or breaks a run."""
    folder = state_dir(create=False) / "servers"
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = load_record(path.stem)
        except CorruptRecord as exc:
            if corrupt is not None:
                corrupt.append(exc)
            continue
        if record:
            records.append(record)
    return records


def record_for(url: TargetURL) -> ServerRecord | None:
    """The record of the running `dbstand server up` server that `url` points at, if any."""
    url = url.direct()
    loopback = ("127.0.0.1", "localhost")
    for record in all_records():
        known = parse_target_url(record.url)
        same_host = known.host == url.host or (known.host in loopback and url.host in loopback)
        if (same_host and known.kind == url.kind and known.port == url.port
                and record_alive(record) and url.user in (None, known.user)):
            return record
    return None


def password_for(url: TargetURL) -> str | None:
    """The password of a `dbstand server up` server that `url` points at, if any.

    Lets users pass the password-less URL that `server up` printed.
    """
    if url.password is not None:
        return None
    record = record_for(url)
    return record.password if record is not None else None


class ManagedServer(ABC):
    """Base of throwaway servers: one temp dir, one free port on the bind address
    (127.0.0.1 unless given, see `bind_address`), clean stop."""

    kind: ClassVar[str]
    #: accounts to run the server as when dbstand runs as root
    service_users: ClassVar[tuple[str, ...]] = ()

    def __init__(self, port: int | None = None, settings: dict[str, Any] | None = None,
                 bind: str = LOOPBACK):
        self.bind = bind_address(bind)
        if port is not None and not 1 <= port <= 65535:
            raise ServerError(f"--port must be a TCP port from 1 to 65535, not {port}")
        if port is not None and port_in_use(port, self.bind):
            raise ServerError(f"port {port} on {self.bind} is in use")
        self.port = port or free_port(self.bind)
        self.settings = dict(settings or {})
        self.password = secrets.token_urlsafe(18)
        self.base_dir: Path | None = None
        self.record: ServerRecord | None = None
        self.run_as = service_user(self.service_users) if self.service_users else None

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> ServerRecord:
        from dbstand.targets.leftovers import Claim, check_state_folder

        check_state_folder()  # before anything starts: a killed run's server is found
        self.base_dir = Path(tempfile.mkdtemp(prefix=f"dbstand-{self.kind}-"))
        try:
            self.claim: Claim | None = Claim(self.base_dir, f"{self.kind} server")
            self.record = self._start(self.base_dir)
            self.record.pid_identity = process_identity(self.record.pid)
        except BaseException:
            # a server already running when start failed (or Ctrl-C hit) is stopped too
            if self.record is not None:
                with contextlib.suppress(Exception):
                    self._stop(self.record)
            self._cleanup()
            raise
        return self.record

    def stop(self) -> None:
        """Stop the server and remove its folder. The process is signalled only if it is
        still this server (`record_alive`): after a crash or a reboot the recorded pid
        may belong to any other program, which is left alone."""
        try:
            if self.record is not None and record_alive(self.record):
                self._stop(self.record)
            elif isinstance(proc := getattr(self, "_proc", None), subprocess.Popen):
                proc.poll()  # our child that died on its own: reap it
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        if self.base_dir is not None:
            # only a folder dbstand made (a record read from disk names it)
            if self.base_dir.name.startswith("dbstand-"):
                shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None
        self.release_claim()

    def release_claim(self) -> None:
        """The folder is gone, or a saved record (`server up`) now keeps the server."""
        claim = getattr(self, "claim", None)
        if claim is not None:
            claim.release()
            self.claim = None

    def __enter__(self) -> ServerRecord:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def target(self) -> TargetURL:
        """URL with password, for in-process use."""
        if self.record is None:
            raise ServerError(f"managed {self.kind} server is not started")
        return self.record.target()

    # -- per database ----------------------------------------------------------
    @abstractmethod
    def _start(self, base_dir: Path) -> ServerRecord:
        """Initialise and start the server in `base_dir`; return its record."""

    @abstractmethod
    def _stop(self, record: ServerRecord) -> None:
        """Stop the server described by `record` (its dir is removed afterwards)."""

    @classmethod
    def stop_record(cls, record: ServerRecord) -> None:
        """Stop a server started by an earlier process (`dbstand server down`)."""
        server = cls.__new__(cls)
        server.record = record
        server.base_dir = Path(record.base_dir)
        server.port = record.port
        server.bind = parse_target_url(record.url).host or LOOPBACK
        server.password = record.password
        server.settings = record.settings
        server.run_as = record.run_as
        server.stop()

    # -- helpers ---------------------------------------------------------------
    def run_tool(self, argv: list[str], *, env: dict[str, str] | None = None,
                 timeout_s: float = 120, what: str = "") -> subprocess.CompletedProcess:
        """Run a server tool as the service user; raise one-line ServerError on failure."""
        full_env = {**os.environ, **(env or {})}
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=full_env,
                                  timeout=timeout_s, user=self.run_as,
                                  cwd=str(self.base_dir or "/"))
        except FileNotFoundError:
            raise ServerError(f"{argv[0]} not found") from None
        except subprocess.TimeoutExpired:
            raise ServerError(f"{what or argv[0]} timed out after {timeout_s:.0f} s") from None
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ServerError(f"{what or Path(argv[0]).name} failed: {tail[0]}")
        return proc
