"""One case's profiling: the profilers attached to the trees its probes measure,
stopped at the end of the measured window, their samples turned into folded stacks
and an SVG flame graph per tier, beside the results file.

The request is the run's (execution.py opens it around a profiled case); the probes
that know the trees (`probes/case.py`, `workloads/http_load.py`) attach and stop, so
the samples cover the measured window, not set-up or verification. Each profiler's
own CPU is read from its process and reported apart from every tier's.

Where the profilers run is the placement table's (`modes/pinning.py`, role `profiler`):
while a case is placed, the table hands its CPUs to the session (`place`), and py-spy,
perf and jcmd start on them. What no affinity can move stays on the sampled CPU: perf's
sampling interrupt and its copy of each sample's user stack run in the sampled thread's
time (docs/profiles.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from dbstand.errors import CaseFailed
from dbstand.profiles import folded, perf_map, tools
from dbstand.profiles.runtimes import GO, JVM, NATIVE, PYTHON, split_tree

#: py-spy samples every process of a tree at this rate, busy or not: 99 Hz keeps its
#: cost on a prefork server's many processes low
RATE_HZ = 99
#: perf samples per CPU-second the target uses: tiers that use a few % of a core
#: (an app waiting on its database) still get samples
PERF_RATE_HZ = 499
#: bytes of user stack perf copies per sample for DWARF unwinding (docs/profiles.md)
DWARF_STACK_BYTES = 16384
STOP_TIMEOUT_S = 30.0
#: py-spy and perf take a moment to attach: the first window waits for them (untimed)
READY_S = 0.5


@dataclass
class _Running:
    tier: str
    kind: str
    pids: list[int]
    output: Path
    proc: subprocess.Popen[bytes] | None = None
    #: the CPUs the placement table gave this profiler (empty: left to the scheduler)
    cpus: list[int] = field(default_factory=list)
    cpu_s: float = 0.0
    started: float = 0.0
    wall_s: float = 0.0


@dataclass
class ProfileSession:
    directory: Path
    running: list[_Running] = field(default_factory=list)
    tiers: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: the placement table's CPUs for the profilers while the case is placed (`place`)
    cpus: list[int] | None = None

    def place(self, cpus: list[int] | None) -> None:
        """The CPUs the placement table gives the profilers from now on (None: the
        case is not placed; they run where the scheduler puts them)."""
        self.cpus = list(cpus) if cpus else None

    def attach(self, tier: str, pid: int, exclude: tuple[int, ...] = ()) -> None:
        """Start the profilers `pid`'s tree (less `exclude`'s and the profilers already
        running, dbstand's children too) needs, one per runtime."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for kind, pids in split_tree(pid, (*exclude, *self.pids())).items():
            perf = kind in (NATIVE, GO, JVM)
            for index, one in enumerate([pids[0]] if perf else pids):
                out = self.directory / f"{tier}-{kind}-{index}"
                run = _Running(tier, kind, pids if perf else [one], out,
                               cpus=list(self.cpus or []))
                try:
                    with _on(run.cpus):
                        _start(run)
                except (OSError, subprocess.SubprocessError) as exc:
                    raise CaseFailed(f"--profile: {kind} could not attach to the {tier}'s "
                                     f"process {run.pids[0]}: {exc}") from exc
                self.running.append(run)
        if any(r.proc is not None for r in self.running):
            time.sleep(READY_S)
        for run in self.running:
            run.started = run.started or time.monotonic()

    def pids(self) -> list[int]:
        """The profilers' own processes: CPU probes leave them out of every tier."""
        return [r.proc.pid for r in self.running if r.proc is not None]

    def stop(self) -> None:
        """Stop every profiler, then fold and draw each tier's samples."""
        running, self.running = self.running, []
        with _on(self.cpus):
            self._stop_and_draw(running)

    def _stop_and_draw(self, running: list[_Running]) -> None:
        for run in running:
            run.wall_s = time.monotonic() - run.started
            _stop(run)
        by_tier: dict[str, list[_Running]] = {}
        for run in running:
            by_tier.setdefault(run.tier, []).append(run)
        for tier, runs in by_tier.items():
            stacks: Counter[str] = Counter()
            for run in runs:
                try:
                    stacks.update(_collect(run))
                except (RuntimeError, OSError, ValueError) as exc:
                    self.notes.append(f"{tier}: {run.kind} samples unreadable: {exc}")
            self.tiers[tier] = self._draw(tier, stacks, runs)

    def _draw(self, tier: str, stacks: Counter[str], runs: list[_Running]) -> dict[str, Any]:
        cpus = sorted({c for r in runs for c in r.cpus})
        out: dict[str, Any] = {"profilers": sorted({r.kind for r in runs}),
                               "profiler_cpu_s": round(sum(r.cpu_s for r in runs), 3),
                               "profiler_cpus": cpus,   # empty: not placed (nor was the case)
                               "profiled_s": round(max(r.wall_s for r in runs), 3),
                               **folded.summary(stacks)}
        if not stacks:
            return out
        path = self.directory / f"{tier}.folded"
        folded.write(stacks, path)
        svg = path.with_suffix(".svg")
        folded.flamegraph(stacks, svg, f"{tier} ({', '.join(out['profilers'])})")
        out["folded"], out["svg"] = str(path), str(svg)
        return out

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"directory": str(self.directory), "tiers": self.tiers,
                               "py_spy_hz": RATE_HZ, "perf_hz": PERF_RATE_HZ}
        if self.notes:
            out["notes"] = self.notes
        return out


def _start(run: _Running) -> None:
    if run.kind == PYTHON:
        cmd = [tools.py_spy(), "record", "--pid", str(run.pids[0]), "--subprocesses",
               "--nonblocking", "--rate", str(RATE_HZ), "--format", "raw",
               "--output", str(run.output.with_suffix(".folded"))]
    else:
        if run.kind == JVM:
            tools.jcmd()   # needed at the end (the perf map): missing, say so before
        graph = "fp" if run.kind in (GO, JVM) else f"dwarf,{DWARF_STACK_BYTES}"
        cmd = [tools.perf(), "record", "-q", "-e", "cpu-clock", "-F", str(PERF_RATE_HZ),
               "--call-graph", graph,
               "-p", ",".join(map(str, run.pids)), "-o", str(run.output.with_suffix(".data"))]
    run.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)


@contextlib.contextmanager
def _on(cpus: list[int] | None) -> Iterator[None]:
    """This thread on `cpus` for the block: a child inherits the affinity of the thread
    that forks it, so a profiler (and jcmd, perf script, inferno) started here runs on
    the profilers' CPUs from its first instruction, and this thread gets its own back."""
    mine = os.sched_getaffinity(0) if cpus else None
    try:
        if cpus:
            os.sched_setaffinity(0, cpus)
        yield
    finally:
        if mine is not None:
            os.sched_setaffinity(0, mine)


def _stop(run: _Running) -> None:
    assert run.proc is not None
    with contextlib.suppress(psutil.Error):
        times = psutil.Process(run.proc.pid).cpu_times()
        run.cpu_s = times.user + times.system
    run.proc.send_signal(signal.SIGINT)
    try:
        run.proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        run.proc.kill()
        run.proc.wait()


def _collect(run: _Running) -> Counter[str]:
    if run.kind == PYTHON:
        return folded.read(run.output.with_suffix(".folded"))
    if run.kind == JVM:
        _write_perf_maps(run.pids)
    data = run.output.with_suffix(".data")
    # without the period field inferno counts samples, not nanoseconds
    script = subprocess.run([tools.perf(), "script", "-F", "comm,pid,tid,time,ip,sym,dso",
                             "-i", str(data)], capture_output=True,
                            text=True, errors="replace", check=False, timeout=600)
    data.unlink(missing_ok=True)   # DWARF samples are large; the folded stacks stay
    return folded.from_perf_script(script.stdout, tools.inferno("inferno-collapse-perf"))


def _write_perf_maps(pids: list[int]) -> None:
    """Each JVM writes /tmp/perf-PID.map now (JDK 17's `Compiler.perfmap`): the JIT's
    code as it is at the end of the window, so perf script names compiled Java methods.
    The launcher removes the maps with the stack's processes."""
    jcmd = tools.jcmd()
    for pid in pids:
        done = subprocess.run([jcmd, str(pid), "Compiler.perfmap"], capture_output=True,
                              text=True, check=False, timeout=120)
        if done.returncode != 0 or not perf_map(pid).exists():
            raise RuntimeError(f"jcmd {pid} Compiler.perfmap wrote no perf map: "
                               f"{(done.stdout + done.stderr).strip()[:200]}")


_ACTIVE: ProfileSession | None = None


def active() -> ProfileSession | None:
    """The profiling request of the case being measured, if it is profiled."""
    return _ACTIVE


@contextlib.contextmanager
def profiling(directory: Path) -> Iterator[ProfileSession]:
    """Profile the case run inside: its probes attach; anything left running stops."""
    global _ACTIVE
    session = ProfileSession(directory.resolve())
    _ACTIVE = session
    try:
        yield session
    finally:
        _ACTIVE = None
        if session.running:
            session.stop()
