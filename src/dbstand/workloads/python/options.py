"""The python workload's run-wide settings, one frozen value given to its constructor."""

from __future__ import annotations

from dataclasses import dataclass

from dbstand.modes.pinning import DEFAULT_PLACEMENT


@dataclass(frozen=True)
class PythonOptions:
    #: `--file`: the bench file (docs/python-bench.md)
    file: str = "bench.py"
    pin: bool = True
    pin_cpus: str = DEFAULT_PLACEMENT
