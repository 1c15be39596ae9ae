"""Ctrl-C and SIGTERM as a flag as well as a KeyboardInterrupt.

The exception a signal handler raises can be lost: raised while the main thread runs
a garbage-collector callback (Dask's scheduler installs one), Python prints it as
"Exception ignored" and goes on. Loops that wait on other processes (a cluster's
workers) therefore also look at the flag, so a Ctrl-C always ends the run.
"""

from __future__ import annotations

import threading

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
