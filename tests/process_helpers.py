"""Helpers for tests that drive dbstand as a separate process."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """`preexec_fn` restoring SIGINT: a child of a backgrounded shell (a CI runner may
    start the suite that way) inherits SIGINT ignored, and Python then never raises
    KeyboardInterrupt, while these tests send SIGINT on purpose."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
