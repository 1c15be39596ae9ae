"""The measurement engine: runs one case, knows nothing of databases."""

from dbstand.engine.config import EngineConfig
from dbstand.engine.runner import Benchmark, CaseMeasurement, run_benchmark

__all__ = ["Benchmark", "CaseMeasurement", "EngineConfig", "run_benchmark"]
