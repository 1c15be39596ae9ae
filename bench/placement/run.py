#!/usr/bin/env python3
"""Which placement table gives the narrowest intervals on this machine? (issue 23.2)

Each candidate of `modes/pinning.CANDIDATES` (and no pinning at all) measures the same
served cases: go-nethttp's hello and db pages and static-nginx's file, at 1 and 4
clients, a fixed number of 1-second runs after a steady warm-up, through the one
load path (workloads/http_load.py). Candidates take turns within each case so that
machine noise hits them alike. Printed per case and candidate: the mean requests/s
and the 95% interval's half-width (% of the mean); then each candidate's median
half-width. Every candidate gives every stack the same resources, so the criterion
is the narrowest intervals (docs/placement.md). Run it with nothing else on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from dbstand.modes.pinning import PLACEMENTS
from dbstand.probes.locate import server_pid
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import get_manifest
from dbstand.targets.mysql.managed import ManagedMariaDB
from dbstand.workloads.http_load import LoadPlan, measure
from dbstand.workloads.webtech.verify import SERVED

CASES = (("static-nginx", "file"), ("go-nethttp", "hello"), ("go-nethttp", "db"))
UNPINNED = "unpinned"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="1-second runs per cell")
    parser.add_argument("--clients", default="1,4")
    args = parser.parse_args()
    levels = [int(x) for x in args.clients.split(",")]
    candidates = [*PLACEMENTS, UNPINNED]
    widths: dict[str, list[float]] = {c: [] for c in candidates}
    server = ManagedMariaDB()
    try:
        target = server.start().target()
        SERVED.prepare(target, "dbstand_")
        db_pid, _ = server_pid(target)
        print(f"{'stack':14} {'test':6} {'clients':>7} " +
              " ".join(f"{c:>22}" for c in candidates))
        for stack in dict.fromkeys(s for s, _ in CASES):
            manifest = get_manifest(stack, "webtech")
            with running_stack(manifest, target=target, workers=max(levels),
                               static_dir=SERVED.static_dir) as handle:
                for name, test in (c for c in CASES if c[0] == stack):
                    for n in levels:
                        cells = []
                        for c in candidates:
                            plan = LoadPlan(connections=n, requests=1000 * n,
                                            repeats=args.runs, max_repeats=args.runs,
                                            pin=c != UNPINNED,
                                            placement=c if c != UNPINNED else "separate")
                            m = measure(f"{handle.base_url}/{test}", plan, handle.pid,
                                        db_pid if test == "db" else None)
                            widths[c].append(m["ci95_pct"])
                            cells.append(f"{m['ops_per_s']:>12,.0f} ±{m['ci95_pct']:5.1f}%")
                        print(f"{name:14} {test:6} {n:>7} " + " ".join(f"{x:>22}" for x in cells),
                              flush=True)
    finally:
        server.stop()
    print("median half-width: " + ", ".join(
        f"{c} {statistics.median(w):.1f}%" for c, w in widths.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
