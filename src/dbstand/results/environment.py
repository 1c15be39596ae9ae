"""The environment recorded with every result (methodology: "Honesty rules")."""

from __future__ import annotations

import functools
import os
import platform
import sys
from typing import Any

import psutil

import dbstand


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return os.uname().machine


@functools.cache
def machine() -> dict[str, Any]:
    """Facts about this machine and interpreter that can change a figure."""
    freq = psutil.cpu_freq()
    return {
        "cpu_model": _cpu_model(),
        "cpu_logical": psutil.cpu_count(logical=True),
        "cpu_physical": psutil.cpu_count(logical=False),
        "cpu_mhz": round(freq.current) if freq else None,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        # os.uname, not platform.platform(): that one runs `uname -p` in a subprocess
        "os": f"{os.uname().sysname}-{os.uname().release}-{os.uname().machine}-"
              f"{'-'.join(platform.libc_ver())}",
        "kernel": os.uname().release,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_build": " ".join(platform.python_build()),
        "dbstand": dbstand.__version__,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "executable": sys.executable,
    }


def environment(packages: dict[str, str], server: dict[str, Any]) -> dict[str, Any]:
    env = dict(machine())
    env["load_avg_1m"] = round(os.getloadavg()[0], 2)  # changes during a run
    env["packages"] = packages
    env["server"] = server
    return env
