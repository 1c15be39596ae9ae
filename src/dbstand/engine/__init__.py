"""The measurement engine: runs one case, knows nothing of databases.

Names load on first use (PEP 562), so that importing `dbstand.engine.histogram` (the
HTTP engine's results do) does not import the runner and its statistics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbstand.engine.config import EngineConfig
    from dbstand.engine.runner import Benchmark, CaseMeasurement, run_benchmark

_WHERE = {"EngineConfig": "dbstand.engine.config", "Benchmark": "dbstand.engine.runner",
          "CaseMeasurement": "dbstand.engine.runner", "run_benchmark": "dbstand.engine.runner"}

__all__ = ["Benchmark", "CaseMeasurement", "EngineConfig", "run_benchmark"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'dbstand.engine' has no attribute {name!r}")
