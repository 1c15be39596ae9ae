"""Tarantool target: the managed throwaway instance, space options, server facts.

The managed instance is Debian's `tarantool` running a generated init script with
the settings of the connector study (specs/kv.md): memtx, write-ahead log off,
a 1 MiB network read-ahead buffer; the kv space is made temporary by the
workload through `space_options()`. Tarantool runs fine as root, so it runs as
whoever runs dbstand.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbstand.errors import ServerError
from dbstand.targets.managed import (
    ManagedServer,
    ServerRecord,
    pid_running,
    read_greeting,
    stop_process,
)

#: box.cfg options of the managed instance; a caller's `settings` override them
DEFAULT_BOX_CFG: dict[str, Any] = {
    "wal_mode": "none",
    "readahead": 1024 * 1024,
    "memtx_memory": 256 * 1024 * 1024,
    # no periodic snapshots: nothing to keep, and no pause in the middle of a run
    "checkpoint_interval": 0,
}

#: settings that are not box.cfg options but tell the workload how to build its space
SPACE_SETTINGS: dict[str, str] = {"engine": "memtx", "temporary_spaces": "yes"}

#: box.cfg values worth recording with every result
RECORDED_CFG = (
    "wal_mode", "readahead", "memtx_memory", "checkpoint_interval", "net_msg_max",
    "iproto_threads", "memtx_use_mvcc_engine", "log_level", "listen",
)

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
PASSWORD_ENV = "DBSTAND_TARANTOOL_PASSWORD"

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[\d+\] ")


def find_binary() -> Path:
    """The tarantool executable: $DBSTAND_TARANTOOL_BIN, else PATH."""
    override = os.environ.get("DBSTAND_TARANTOOL_BIN")
    found = override if override and os.access(override, os.X_OK) else shutil.which("tarantool")
    if not found:
        raise ServerError(
            "no tarantool binary found: install Debian's tarantool package or set "
            "DBSTAND_TARANTOOL_BIN"
        )
    return Path(found)


def version_tuple(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version string such as '2.6.0-0-g47aa4e01e'."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not match:
        raise ValueError(f"not a Tarantool version: {version!r}")
    return int(match[1]), int(match[2]), int(match[3] or 0)


def temporary_space_option(version: str) -> dict[str, Any]:
    """The box.schema.space.create option that makes a space's data temporary.

    Data not written to the WAL or snapshots, as the study's space. Before 3.0 that
    is `temporary = true`; 3.0 added space types, where the same thing is
    `type = 'data-temporary'` (`'temporary'` there also makes the definition
    local and vanishing, and `is_local` is another thing: replication-local).
    """
    if version_tuple(version) >= (3, 0, 0):
        return {"type": "data-temporary"}
    return {"temporary": True}


def space_options(version: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Options for the kv workload's box.schema.space.create.

    `settings` are the managed server's record settings (engine, temporary_spaces),
    or None for a server dbstand did not start: memtx and temporary then.
    """
    merged = {**SPACE_SETTINGS, **(settings or {})}
    engine = str(merged["engine"])
    options: dict[str, Any] = {"engine": engine}
    temporary = str(merged["temporary_spaces"]).lower() in ("yes", "true", "1", "on")
    if temporary and engine == "memtx":  # vinyl has no temporary spaces
        options.update(temporary_space_option(version))
    return options


class ManagedTarantool(ManagedServer):
    """A throwaway Tarantool on its bind address (127.0.0.1 unless given) with user
    `dbstand`, settings as the study."""

    kind = "tarantool"
    service_users = ()  # runs as whoever runs dbstand, root included

    _proc: subprocess.Popen | None = None

    def _start(self, base_dir: Path) -> ServerRecord:
        binary = find_binary()
        log_path = base_dir / "server.log"
        pid_file = base_dir / "tarantool.pid"
        space_settings = {k: str(self.settings.get(k, v)) for k, v in SPACE_SETTINGS.items()}
        cfg = {**DEFAULT_BOX_CFG,
               **{k: v for k, v in self.settings.items() if k not in SPACE_SETTINGS}}
        for name in ("memtx", "wal", "vinyl"):
            (base_dir / name).mkdir()
        fixed = {
            "work_dir": str(base_dir), "memtx_dir": str(base_dir / "memtx"),
            "wal_dir": str(base_dir / "wal"), "vinyl_dir": str(base_dir / "vinyl"),
            "log": str(log_path), "pid_file": str(pid_file), "background": False,
        }
        for name in cfg:
            if not _IDENTIFIER.match(name) or name in fixed or name == "listen":
                raise ServerError(f"bad or reserved Tarantool setting {name!r}")
        listen = f"{self.bind}:{self.port}"
        script = base_dir / "init.lua"
        script.write_text(_init_script({**fixed, **cfg}, listen))
        # TT_* variables would override box.cfg (Tarantool >= 2.8): the instance
        # must be what the record says
        env = {k: v for k, v in os.environ.items() if not k.startswith("TT_")}
        env[PASSWORD_ENV] = self.password
        with open(log_path, "ab") as log_fh:
            try:
                self._proc = subprocess.Popen(
                    [str(binary), str(script)], stdin=subprocess.DEVNULL, stdout=log_fh,
                    stderr=subprocess.STDOUT, cwd=str(base_dir), env=env,
                    start_new_session=True,
                )
            except OSError as exc:
                raise ServerError(f"cannot start {binary}: {exc.strerror}") from None
        try:
            # the script listens last, after the user exists: a greeting means ready
            greeting = read_greeting(self.port, START_TIMEOUT_S, self._proc, self.bind)
            if not greeting.startswith(b"Tarantool"):
                raise ServerError(f"something other than our Tarantool answers on {listen}")
        except ServerError as exc:
            stop_process(self._proc.pid, self._proc, sig=signal.SIGKILL)
            raise ServerError(f"Tarantool did not start ({exc}): "
                              f"{last_log_line(log_path)}") from None
        except BaseException:
            stop_process(self._proc.pid, self._proc, sig=signal.SIGKILL)
            raise
        return ServerRecord(
            kind=self.kind, pid=self._proc.pid, port=self.port,
            url=f"tarantool://dbstand@{self.bind}:{self.port}",
            password=self.password, base_dir=str(base_dir), log_path=str(log_path),
            run_as=None,
            settings={"listen": listen, **space_settings, **cfg},
        )

    def _stop(self, record: ServerRecord) -> None:
        pid = record.pid
        if not _is_our_server(pid, Path(record.base_dir)):
            return
        stop_process(pid, self._proc, timeout_s=STOP_TIMEOUT_S)


def server_facts(conn: Any) -> dict[str, Any]:
    """Version, pid and the box.cfg values that matter, through a `tarantool` connection.

    Needs execute access to Lua (the managed server's `dbstand` user has it).
    """
    names = ", ".join(f"'{name}'" for name in RECORDED_CFG)
    lua = (
        "local facts = {version = box.info.version, pid = box.info.pid} "
        f"for _, name in ipairs({{{names}}}) do facts[name] = box.cfg[name] end "
        "return facts"
    )
    data = conn.eval(lua).data
    facts = data[0] if data else {}
    return dict(sorted(facts.items()))


def last_log_line(log_path: Path | str) -> str:
    """The line of the instance's log that says why it failed.

    The last error (fatal/error log lines, ER_* codes, Lua errors), else the last
    line; Tarantool's closing "fatal error, exiting the event loop" says nothing.
    """
    try:
        lines = Path(log_path).read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return "no server log"
    lines = [line for line in lines
             if line.strip() and "exiting the event loop" not in line]
    errors = [line for line in lines
              if any(mark in line for mark in (" F> ", " E> ", "ER_", "Error", ".lua:"))]
    chosen = errors[-1] if errors else (lines[-1] if lines else "empty server log")
    return _LOG_PREFIX.sub("", chosen.strip())


def _lua(value: Any) -> str:
    """A Python value as a Lua literal (strings with decimal escapes: any byte is safe)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        safe = b"_-./: "
        return '"' + "".join(
            chr(b) if (chr(b).isalnum() and b < 128) or b in safe else f"\\{b:03d}"
            for b in value.encode()
        ) + '"'
    raise ServerError(f"cannot pass {value!r} to box.cfg")


def _init_script(cfg: Mapping[str, Any], listen: str) -> str:
    body = "\n".join(f"    {name} = {_lua(value)}," for name, value in cfg.items())
    return f"""-- generated by dbstand: a throwaway instance, removed when stopped
box.cfg{{
{body}
}}
box.schema.user.create('dbstand', {{password = assert(os.getenv({_lua(PASSWORD_ENV)}))}})
-- everything the kv workload does, binary protocol and SQL: spaces, sequences, Lua
box.schema.user.grant('dbstand', 'read,write,execute,create,alter,drop', 'universe')
-- listen last, so that an open port means the user exists
box.cfg{{listen = {_lua(listen)}}}
"""


def _is_our_server(pid: int, base_dir: Path) -> bool:
    """Whether `pid` is still the instance of `base_dir` (guards against pid reuse).

    Tarantool rewrites its command line, so its pid file and its working directory
    (box.cfg work_dir) identify it.
    """
    if not pid_running(pid):
        return False
    with contextlib.suppress(OSError, ValueError, IndexError):
        if int((base_dir / "tarantool.pid").read_text().split()[0]) == pid:
            return True
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd")) == base_dir
    except OSError:
        return not Path("/proc/self").exists()  # no /proc: trust the record
