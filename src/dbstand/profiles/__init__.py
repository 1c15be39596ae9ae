"""Sampling profiles of the process trees a case measures (docs/profiles.md).

`session.py` holds the run's active profiling request, which the probes of a case
(`probes/case.py`, `workloads/http_load.py`) ask to attach to the trees they measure;
`runtimes.py` picks each process's profiler (py-spy, perf, JDK Flight Recorder);
`tools.py` finds the profilers and says in one line what is missing; `folded.py`
reads folded stacks (shares, the JFR converter) and draws flame graphs with inferno.
"""

from __future__ import annotations

from pathlib import Path

#: `--profile`'s help, the same on every run command
PROFILE_HELP = ("Sample the measured trees (app stack, database, in-process client) with "
                "py-spy, perf or JDK Flight Recorder and draw flame graphs beside the "
                "results; the case also runs unprofiled once, for the overhead ratio")


def profile_param(on: bool) -> dict[str, bool]:
    """A case's `profile` param: present only when profiled, so an unprofiled case's key
    stays what it was and `compare` never matches a profiled case with an unprofiled one."""
    return {"profile": True} if on else {}


def perf_map(pid: int) -> Path:
    """Where a JIT runtime started with `launch_env` writes its symbols for perf: the
    launcher removes these with the stack's processes."""
    return Path(f"/tmp/perf-{pid}.map")


def launch_env(profiled: bool) -> dict[str, str]:
    """What a server stack's environment adds when its cases are profiled: Node writes
    its JIT's perf map (/tmp/perf-PID.map), so perf names JavaScript functions."""
    return {"NODE_OPTIONS": "--perf-basic-prof"} if profiled else {}
