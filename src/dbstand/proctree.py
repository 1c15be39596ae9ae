"""A process and its descendants: the trees the CPU probes and the profilers read."""

from __future__ import annotations

import os

import psutil


def tree(pid: int) -> list[psutil.Process]:
    """`pid` and its descendants (just `pid` if they cannot be listed).

    The probes read a tree at both edges of every timed window. psutil finds children
    by reading every process's parent on the machine; the kernel's own lists of each
    thread's children (/proc/PID/task/TID/children) cost the tree's size instead."""
    root = psutil.Process(pid)
    try:
        below = _descendants(pid)
    except OSError:  # a kernel without those lists: psutil's scan
        try:
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return [root]
    procs = [root]
    for child in below:
        try:
            procs.append(psutil.Process(child))
        except psutil.Error:  # exited meanwhile
            continue
    return procs


def _descendants(pid: int) -> list[int]:
    """Pids below `pid`, parents before their children; OSError if the kernel keeps
    no children lists (CONFIG_PROC_CHILDREN)."""
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        raise OSError("no /proc/PID/task/TID/children here")
    found: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop(0)
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue   # exited meanwhile
        for thread in threads:
            try:
                with open(f"/proc/{parent}/task/{thread}/children") as listing:
                    kids = [int(k) for k in listing.read().split()]
            except OSError:
                continue
            found.extend(kids)
            queue.extend(kids)
    return found
