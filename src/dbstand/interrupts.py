"""Ctrl-C and SIGTERM as a flag as well as a KeyboardInterrupt.

The exception a signal handler raises can be lost: raised while the main thread runs
a garbage-collector callback (Dask's scheduler installs one), Python prints it as
"Exception ignored" and goes on. There the handler only sets the flag; loops that
wait on other processes (a cluster's workers) and the run's loop over its cases look
at it, so a Ctrl-C always ends the run.
"""

from __future__ import annotations

import gc
import threading
from types import FrameType

_requested = threading.Event()


def request() -> None:
    """A signal asked the run to stop (called by the CLI's handlers)."""
    _requested.set()


def reset() -> None:
    """A new command starts: no stop asked yet."""
    _requested.clear()


def check() -> None:
    """Raise KeyboardInterrupt if a stop was asked (even if its exception was lost)."""
    if _requested.is_set():
        raise KeyboardInterrupt


def in_gc_callback(frame: FrameType | None) -> bool:
    """Whether `frame` runs inside a garbage-collector callback, where a raised
    exception is printed as "Exception ignored" and lost: the handler then only sets
    the flag, which the waiting loop sees a few milliseconds later."""
    codes = set()
    for callback in gc.callbacks:
        function = getattr(callback, "__func__", callback)
        code = getattr(function, "__code__", None)
        if code is not None:
            codes.add(code)
    while frame is not None and codes:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False
