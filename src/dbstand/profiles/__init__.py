"""Sampling profiles of the process trees a case measures (docs/profiles.md).

`session.py` holds the run's active profiling request, which the probes of a case
(`probes/case.py`, `workloads/http_load.py`) ask to attach to the trees they measure;
`runtimes.py` picks each process's profiler (py-spy, or perf: DWARF, frame pointers);
`tools.py` finds the profilers and says in one line what is missing; `folded.py`
reads folded stacks (shares, perf's samples) and draws flame graphs with inferno.
"""

from __future__ import annotations

from pathlib import Path

#: `--profile`'s help, the same on every run command
PROFILE_HELP = ("Sample the measured trees (app stack, database, in-process client) with "
                "py-spy or perf (a JVM's JIT code named by its perf map) and draw flame "
                "graphs beside the results; the case also runs unprofiled once, for the "
                "overhead ratio")


def profile_param(on: bool) -> dict[str, bool]:
    """A case's `profile` param: present only when profiled, so an unprofiled case's key
    stays what it was and `compare` never matches a profiled case with an unprofiled one."""
    return {"profile": True} if on else {}


def perf_map(pid: int) -> Path:
    """Where a JIT runtime writes its symbols for perf (Node started with `launch_env`,
    a JVM asked by the profiling session): the launcher removes these with the stack's
    processes."""
    return Path(f"/tmp/perf-{pid}.map")


#: JVM options a profiled stack's `java` launcher picks up (JDK_JAVA_OPTIONS): JIT code
#: keeps the frame pointer, so perf's frame-pointer walk goes through Java frames
JVM_PROFILED_OPTIONS = "-XX:+PreserveFramePointer"


def launch_env(profiled: bool) -> dict[str, str]:
    """What a server stack's environment adds when its cases are profiled: Node writes
    its JIT's perf map (/tmp/perf-PID.map), so perf names JavaScript functions; a JVM's
    compiled Java keeps frame pointers, so perf's stacks go through it (the JVM writes
    its perf map when the session asks, `session._write_perf_maps`)."""
    if not profiled:
        return {}
    return {"NODE_OPTIONS": "--perf-basic-prof", "JDK_JAVA_OPTIONS": JVM_PROFILED_OPTIONS}
