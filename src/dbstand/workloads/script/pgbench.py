"""The limit row of scripts on PostgreSQL: pgbench itself running the same files with
the same weights and variables, `-M prepared` or `-M simple` (the stack's protocol),
one pgbench process per iteration of R transactions over C connections.

An iteration's time is R / pgbench's tps (its connection set-up excluded); latencies
come from its `-l` log; per-statement latencies from `-r`, weighted over iterations
by each script's transactions.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbstand.engine.executor import Executor, IterationResult, Prepared
from dbstand.targets.postgresql.pgbench import (
    connection_args,
    find_pgbench,
    parse_statements,
    read_latencies,
    run_pgbench,
)
from dbstand.targets.url import TargetURL
from dbstand.workloads.script.parse import Script


class _Run(Prepared):
    def __init__(self, owner: PgbenchScriptExecutor, argv: list[str], env: dict[str, str],
                 prefix: str):
        self.owner, self.argv, self.env, self.prefix = owner, argv, env, prefix

    def execute(self) -> IterationResult:
        summary, stdout = run_pgbench(self.argv, self.env)
        self.owner.add_statements(stdout)
        processed = int(summary["processed"])
        elapsed_ns = round(processed / summary["tps"] * 1e9)
        return IterationResult(elapsed_ns, processed,
                               read_latencies(self.owner.folder, self.prefix))


class PgbenchScriptExecutor(Executor):
    """Each iteration is one pgbench process running R transactions of the mix."""

    timed = ("pgbench: iteration time = transactions / pgbench's tps (its connection "
             "set-up excluded); probes bracket the whole pgbench process")

    def __init__(self, target: TargetURL, scripts: Sequence[Script], defines: dict[str, Any],
                 protocol: str, clients: int):
        self.folder = Path(tempfile.mkdtemp(prefix="dbstand-pgbench-"))
        super().__init__([lambda: shutil.rmtree(self.folder, ignore_errors=True)])
        self.target, self.scripts, self.defines = target, list(scripts), defines
        self.protocol, self.clients = protocol, clients
        self.workers = clients
        self.binary = find_pgbench()
        self.runs = 0
        self.files: list[str] = []
        for i, script in enumerate(self.scripts):
            path = self.folder / f"script{i}.sql"
            path.write_text(script.source)
            self.files.append(f"{path}@{script.weight}")
        #: (script, command index) -> (summed ms x transactions, transactions)
        self.latency: dict[tuple[int, int], tuple[float, int]] = {}
        self.transactions: dict[int, int] = {}

    def add_statements(self, stdout: str) -> None:
        transactions, rows = parse_statements(stdout)
        position: dict[int, int] = {}
        for s, n in transactions.items():
            self.transactions[s] = self.transactions.get(s, 0) + n
        for s, mean_ms, _text in rows:
            pc = position.get(s, 0)
            position[s] = pc + 1
            n = transactions.get(s, 0)
            total, count = self.latency.get((s, pc), (0.0, 0))
            self.latency[(s, pc)] = (total + mean_ms * n, count + n)

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        run = self.runs
        self.runs += 1
        connect, env = connection_args(self.target, self.folder)
        per_client = max(1, len(args) // self.clients)
        argv = [str(self.binary), "-n", *connect, "-M", self.protocol, "-r",
                "-c", str(self.clients), "-j", str(self.clients), "-t", str(per_client)]
        for name, value in self.defines.items():
            argv += ["-D", f"{name}={value}"]
        for spec in self.files:
            argv += ["-f", spec]
        prefix = f"log{run}"
        if every:
            argv += ["-l", f"--log-prefix={self.folder / prefix}"]
            if every > 1:
                argv.append(f"--sampling-rate={1 / every:.6f}")
        argv.append(self.target.database or self.target.user or "postgres")
        return _Run(self, argv, env, prefix)
