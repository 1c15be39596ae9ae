"""The timed part of an in-process case (kv, script, python): the client and the
database placed by the placement table, the probes' windows around the iterations,
and the executor and the probes closed after, whatever happens."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.modes.pinning import pinned
from dbstand.probes.locate import server_pid

if TYPE_CHECKING:
    from dbstand.engine.executor import Executor
    from dbstand.engine.runner import CaseMeasurement
    from dbstand.modes.spec import ModeSpec
    from dbstand.probes.case import CaseProbes
    from dbstand.workloads.base import Case, Progress


def placement_of(mode: ModeSpec, pin_cpus: str) -> str | None:
    """Where a script or python case is placed: the run's placement for one connection,
    each on its own CPU for several, none for worker processes (they place
    themselves)."""
    if mode.kind == "processes":
        return None
    return "separate" if mode.concurrency > 1 else pin_cpus


def measure(case: Case, bench: Benchmark, config: EngineConfig, progress: Progress,
            executor: Executor, probes: Callable[[], CaseProbes | None], *, want: bool,
            placement: str, why_not: str = ""
            ) -> tuple[CaseMeasurement, dict[str, Any] | None, dict[str, Any]]:
    """Run `bench` on `executor`, placed by `placement` when `want` (else `why_not`
    says why not), with the probes `probes()` makes (None: no probes): the
    measurement, the probes' record and the placement's record."""
    made: CaseProbes | None = None
    try:
        made = probes()
        pid = server_pid(case.target)[0] if want else None
        with pinned(pid, want, why_not, placement) as pins:
            measurement = run_benchmark(bench, config, progress, executor, made,
                                        made.warmup if made else None)
        probed = made.result(config.revs, measurement.warmup_iterations) if made else None
        return measurement, probed, pins.record()
    finally:
        executor.close()
        if made is not None:
            made.close()
