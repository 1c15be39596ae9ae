"""dbstand's HTTP load engine: native (Rust) hot loop, typed Python API.

    from dbstand.loadgen import run_closed
    result = run_closed("http://127.0.0.1:8080/", connections=64, duration=5)
    print(result.requests_per_s, result.percentiles_ms([50, 99]))
"""

from dbstand.loadgen.engine import DEFAULT_TIMEOUT_S, run_closed, run_open, run_scenario
from dbstand.loadgen.errors import (
    EngineMissingError,
    LoadgenConfigError,
    LoadgenError,
    TargetUnreachableError,
)
from dbstand.loadgen.result import Counts, ErrorCounts, LoadResult, StepResult
from dbstand.loadgen.scenario import Scenario, Step

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "Counts",
    "EngineMissingError",
    "ErrorCounts",
    "LoadResult",
    "LoadgenConfigError",
    "LoadgenError",
    "Scenario",
    "Step",
    "StepResult",
    "TargetUnreachableError",
    "run_closed",
    "run_open",
    "run_scenario",
]
