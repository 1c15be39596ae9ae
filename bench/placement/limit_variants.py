#!/usr/bin/env python3
"""Is the static limit row at its best? (issue 23.3)

Starts the static-nginx limit row as `dbstand run webtech` does (placement table, the
stacks' worker rule) and measures /file and /big at 1 and 4 clients under variants of
its generated configuration, each applied by rewriting nginx.conf and a reload
(SIGHUP): the shipped one, sendfile off, tcp_nopush off, one worker. Variants take
turns within each cell, through the one load path (workloads/http_load.py). Run it
with nothing else on the machine.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time

from dbstand.modes.pinning import cpus_for
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import get_manifest
from dbstand.workloads.http_load import LoadPlan, measure
from dbstand.workloads.webtech.verify import SERVED

CLIENTS = (1, 4)
VARIANTS = {
    "shipped": [],
    "sendfile off": [(r"sendfile on;", "sendfile off;")],
    "tcp_nopush off": [(r"tcp_nopush on;", "tcp_nopush off;")],
    "1 worker": [(r"worker_processes \d+;", "worker_processes 1;")],
}


def main() -> int:
    manifest = get_manifest("static-nginx", "webtech")
    workers = max(len(cpus_for("stack") or []) or os.cpu_count() or 1, max(CLIENTS))
    with running_stack(manifest, workers=workers, static_dir=SERVED.static_dir) as handle:
        conf = handle.work_dir / "nginx.conf"
        shipped = conf.read_text()
        print(f"{'test':5} {'clients':>7} " + " ".join(f"{v:>22}" for v in VARIANTS))
        for test in ("file", "big"):
            for n in CLIENTS:
                cells = []
                for edits in VARIANTS.values():
                    text = shipped
                    for pattern, repl in edits:
                        text = re.sub(pattern, repl, text)
                    conf.write_text(text)
                    os.kill(handle.pid, signal.SIGHUP)
                    time.sleep(1.0)  # old workers finish, new ones start
                    plan = LoadPlan(connections=n, requests=1000 * n, repeats=5, max_repeats=8,
                                    interval_s=0)
                    m = measure(f"{handle.base_url}/{test}", plan, handle.pid)
                    cells.append(f"{m['ops_per_s']:>12,.0f} ±{m['ci95_pct']:5.1f}%")
                print(f"{test:5} {n:>7} " + " ".join(f"{c:>22}" for c in cells), flush=True)
        conf.write_text(shipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
