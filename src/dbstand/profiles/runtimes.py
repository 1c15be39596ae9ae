"""Which profiler samples which process: decided from the process's executable.

CPython (and gunicorn's, uvicorn's workers, which are CPython) -> py-spy; a JVM ->
JDK Flight Recorder, which names Java frames; a Go program -> perf walking frame
pointers (Go keeps them; its stacks defeat DWARF unwinding: one frame deep, measured);
anything else -> perf with DWARF unwinding (Debian's binaries have no frame pointers). Node's JIT
frames are named through its perf map when the stack starts node with
--perf-basic-prof; PyPy's and Mono's JIT frames stay unnamed under perf.
"""

from __future__ import annotations

import os
from collections import defaultdict

import psutil

from dbstand.proctree import tree

PYTHON, JVM, NATIVE, GO = "py-spy", "jfr", "perf", "perf-fp"
#: an ELF section only the Go toolchain writes
GO_SECTION = b".go.buildinfo"


def elf_sections(path: str) -> set[bytes]:
    """Section names of a 64-bit little-endian ELF file (empty if it is not one)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return set()
        shoff = int.from_bytes(head[0x28:0x30], "little")
        size, count, names_at = (int.from_bytes(head[i:i + 2], "little")
                                 for i in (0x3A, 0x3C, 0x3E))
        f.seek(shoff)
        table = f.read(size * count)
        headers = [table[i * size:(i + 1) * size] for i in range(count)]
        if names_at >= len(headers):
            return set()
        names = headers[names_at]
        f.seek(int.from_bytes(names[0x18:0x20], "little"))
        strings = f.read(int.from_bytes(names[0x20:0x28], "little"))
    out = set()
    for h in headers:
        start = int.from_bytes(h[0:4], "little")
        out.add(strings[start:strings.find(b"\0", start)])
    return out


def runtime_of(proc: psutil.Process) -> str:
    try:
        exe = os.path.basename(proc.exe())
    except (psutil.Error, OSError):
        return NATIVE
    if exe.startswith("python"):
        return PYTHON
    if exe == "java":
        return JVM
    try:
        if GO_SECTION in elf_sections(proc.exe()):
            return GO
    except (psutil.Error, OSError):
        pass
    return NATIVE


def split_tree(pid: int, exclude: tuple[int, ...] = ()) -> dict[str, list[int]]:
    """The tree's pids by profiler, without the subtrees rooted at `exclude`. For py-spy
    only the topmost Python processes (it follows their subprocesses itself); a JVM is
    one process; perf takes every pid of its kind."""
    skip = {p.pid for root in exclude for p in tree(root)}
    procs = [p for p in tree(pid) if p.pid not in skip]
    kinds = {p.pid: runtime_of(p) for p in procs}
    out: dict[str, list[int]] = defaultdict(list)
    for proc in procs:
        kind = kinds[proc.pid]
        if kind == PYTHON:
            try:
                parent = proc.ppid()
            except psutil.Error:
                continue
            if kinds.get(parent) == PYTHON:
                continue
        out[kind].append(proc.pid)
    return dict(out)


#: per server stack's language (stack.toml), the profiler `stack list` names
BY_LANGUAGE = {
    "python": "py-spy",
    "java": "jfr (JDK Flight Recorder)",
    "javascript": "perf + node's perf map (--perf-basic-prof)",
    "csharp": "perf (Mono's JIT frames unnamed)",
    "perl": "perf (the perl interpreter's C frames, not Perl subs)",
    "php": "perf (PHP's engine: execute_ex, not PHP functions)",
    "static": "perf (DWARF unwinding)",
    "go": "perf (frame pointers)",
}


def profiler_for(language: str, name: str) -> str:
    """What `--profile` samples a server stack with, as `dbstand stack list` says."""
    if "pypy" in name:
        return "perf (PyPy's JIT frames unnamed; py-spy reads CPython only)"
    return BY_LANGUAGE.get(language, "perf (DWARF unwinding)")
