"""Engine settings, validated once so bad values fail before anything runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dbstand.errors import UserError

LATENCY_MODES = ("auto", "all", "off")


@dataclass(frozen=True)
class EngineConfig:
    """How one case is measured (methodology.md, "Timing loop")."""

    revs: int = 10_000              # operations per iteration
    warmup: int = 1                 # uncounted iterations before measuring (at least)
    steady_warmup: bool = False     # go on warming while iterations still get faster (kv)
    min_iterations: int = 5
    max_iterations: int = 30
    max_time_s: float = 60.0        # per case, counted iterations only
    target_ci_pct: float = 3.0
    stop_rule: str = "ci"           # "ci" (default) or "study" (the kv study's rule)
    pause_s: float = 0.0            # pause between iterations
    gc_off: bool = True             # GC disabled inside iterations, collected between
    latency: str = "auto"           # auto | all | off | every:K
    latency_budget_pct: float = 1.0  # auto: max share of op time spent timing ops
    seed: int = 42
    interval_s: float = 1.0         # time-series bucket width (series.py); 0 = off

    def __post_init__(self) -> None:
        checks = [
            (self.revs >= 1, "--revs must be at least 1"),
            (self.warmup >= 1, "--warmup must be at least 1 (a cold first iteration is "
                               "never counted)"),
            (self.min_iterations >= 2, "--min-iterations must be at least 2"),
            (self.max_iterations >= self.min_iterations,
             "--max-iterations must be at least --min-iterations"),
            (self.max_time_s > 0, "--max-time must be positive"),
            (self.target_ci_pct > 0, "--ci must be positive"),
            (self.pause_s >= 0, "--pause cannot be negative"),
            (self.interval_s >= 0, "--interval cannot be negative (0 turns the time series off)"),
            (self.stop_rule in ("ci", "study"), "--stop-rule must be 'ci' or 'study'"),
            (self.latency_budget_pct > 0, "latency budget must be positive"),
        ]
        for ok, message in checks:
            if not ok:
                raise UserError(message)
        self.latency_every()  # validates

    def latency_every(self) -> int | None:
        """Fixed sampling stride: 1 = every op, None = auto, 0 = off."""
        if self.latency == "auto":
            return None
        if self.latency == "all":
            return 1
        if self.latency == "off":
            return 0
        if self.latency.startswith("every:"):
            try:
                k = int(self.latency.split(":", 1)[1])
            except ValueError:
                k = 0
            if k >= 1:
                return k
        raise UserError(f"--latency must be auto, all, off or every:K, not {self.latency!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
