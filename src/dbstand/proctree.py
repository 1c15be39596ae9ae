"""A process and its descendants: the trees the CPU probes and the profilers read."""

from __future__ import annotations

import psutil


def tree(pid: int) -> list[psutil.Process]:
    """`pid` and its descendants (just `pid` if they cannot be listed)."""
    root = psutil.Process(pid)
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]
