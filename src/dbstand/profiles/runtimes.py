"""Which profiler samples which process: decided from the process's executable.

CPython (and gunicorn's, uvicorn's workers, which are CPython) -> py-spy; a JVM ->
perf walking frame pointers, the JVM started with -XX:+PreserveFramePointer when
profiled (`launch_env`) and its JIT's code named by the perf map it writes at the end
of the window; a Go program -> perf walking frame pointers (Go keeps them; its stacks
defeat DWARF unwinding: one frame deep, measured); anything else -> perf with DWARF
unwinding (Debian's binaries have no frame pointers). Node's JIT frames are named
through its perf map when the stack starts node with --perf-basic-prof; PyPy's and
Mono's JIT frames stay unnamed under perf.
"""

from __future__ import annotations

import os
from collections import defaultdict

import psutil

from dbstand.proctree import tree

PYTHON, JVM, NATIVE, GO = "py-spy", "perf-java", "perf", "perf-fp"
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


NATIVE_ONLY = "native frames only: "

#: per server stack's language (stack.toml): the profiler `--profile` samples its tree
#: with, and what that profiler can name in it (`dbstand stack list`)
BY_LANGUAGE: dict[str, tuple[str, str]] = {
    "python": ("py-spy", "Python functions (file:line); C extensions as the call into them"),
    "java": ("perf (frame pointers) + the JVM's perf map (Compiler.perfmap)",
             "JIT-compiled Java methods by name (inlined ones inside their caller; "
             "interpreted ones as Interpreter), the JVM's C++ (GC, JIT compiler), the kernel"),
    "javascript": ("perf + node's perf map (--perf-basic-prof)",
                   "JavaScript functions by name, V8's and libuv's C++"),
    "csharp": ("perf (DWARF unwinding)",
               NATIVE_ONLY + "Mono's runtime in C; JIT-compiled C# methods unnamed"),
    "perl": ("perf (DWARF unwinding)",
             NATIVE_ONLY + "the perl interpreter's C functions, not Perl subs"),
    "php": ("perf (DWARF unwinding)",
            NATIVE_ONLY + "PHP's engine (execute_ex...), not PHP functions"),
    "static": ("perf (DWARF unwinding)", "the web server's C functions"),
    "go": ("perf (frame pointers)", "Go functions"),
    "cpp": ("perf (DWARF unwinding)", "C++ functions"),
}


def profiler_for(language: str, name: str) -> tuple[str, str]:
    """(what `--profile` samples a server stack with, what it names there), as
    `dbstand stack list` says."""
    if "pypy" in name:
        return ("perf (DWARF unwinding; py-spy reads CPython only)",
                NATIVE_ONLY + "PyPy's interpreter; JIT-compiled Python unnamed")
    return BY_LANGUAGE.get(language, ("perf (DWARF unwinding)", "native functions"))
