"""Where the profilers are, and one line naming what to install or set when one is not."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from dbstand.errors import UserError
from dbstand.paths import cache_dir

#: inferno (CDDL-1.0, docs/profiles.md) is built by scripts/install-profilers.sh here
INFERNO_ROOT_NAME = "tools/inferno"


class ProfilerMissing(UserError):
    """A profiler, its tool or its permission is missing: what to install or set."""


def _venv_bin(name: str) -> str | None:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else None


def _found(path: str | None, missing: str) -> str:
    """`path`, or the one line saying what to install."""
    if not path:
        raise ProfilerMissing(f"--profile needs {missing}")
    return path


def py_spy() -> str:
    return _found(shutil.which("py-spy") or _venv_bin("py-spy"),
                  "py-spy for Python processes: pip install 'dbstand[profile]' (py-spy 0.4.1)")


def perf() -> str:
    found = _found(shutil.which("perf"),
                   "perf for native processes: apt-get install linux-perf")
    if os.geteuid() != 0:
        level = Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
        if int(level) > 1:
            raise ProfilerMissing(f"--profile needs perf_event_paranoid <= 1 (it is {level}): "
                                  "sysctl kernel.perf_event_paranoid=1, or run as root")
    return found


def jcmd() -> str:
    """jcmd, which has a JVM write its JIT's perf map (JDK 17+: `Compiler.perfmap`)."""
    return _found(shutil.which("jcmd"), "jcmd for JVM processes (it writes the JIT's perf "
                                        "map): apt-get install openjdk-17-jdk-headless")


def inferno(tool: str) -> str:
    """An inferno binary (`inferno-flamegraph`, `inferno-collapse-perf`)."""
    local = cache_dir() / INFERNO_ROOT_NAME / "bin" / tool
    return _found(shutil.which(tool) or (str(local) if local.exists() else None),
                  f"inferno 0.12 ({tool}): run scripts/install-profilers.sh")


def check_all() -> None:
    """Before a profiled run starts: every tool there, so no case fails on it later."""
    py_spy()
    perf()
    inferno("inferno-flamegraph")
    inferno("inferno-collapse-perf")
