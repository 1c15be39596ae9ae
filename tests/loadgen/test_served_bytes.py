"""dbstand's served figure against the server's own count (issue 23): a stack's
processes write each answer once, so the bytes the kernel counts as written by the
stack's process tree (/proc/PID/io, sendfile included) over a run equal the bytes the
engine counts as received, whatever the machine's speed does; that holds at every
connection count. Measured 2026-11-26: nginx's file equal to the byte, Go's hello
within 0.2% (answers cut at the run's end). Two counts of the same bytes, not rates:
a busy machine changes how many there are, not whether they agree, so these tests
run beside others (test_wrk_agreement.py's rates need the machine to themselves)."""

from __future__ import annotations

import psutil
import pytest

from dbstand.loadgen.engine import run_closed
from dbstand.stacks.launcher import StackHandle

from .conftest import PAGES

RUN_S = 1


def written(pid: int) -> int:
    """Bytes the kernel counts as written by `pid` and its descendants."""
    root = psutil.Process(pid)
    return sum(proc.io_counters().write_chars
               for proc in [root, *root.children(recursive=True)])


@pytest.mark.parametrize(("webtech_page", "connections"),
                         [(name, n) for name in PAGES for n in (1, 4)],
                         indirect=["webtech_page"])
def test_engine_counts_what_the_server_wrote(webtech_page: tuple[StackHandle, str],
                                             connections: int) -> None:
    handle, url = webtech_page
    run_closed(url, connections, duration=0.2)  # connections and caches warm
    before = written(handle.pid)
    result = run_closed(url, connections, duration=RUN_S)
    sent = written(handle.pid) - before
    assert result.failed == 0 and result.requests > 1000, result
    assert abs(result.bytes / sent - 1) <= 0.01, (url, connections, result.bytes, sent)
