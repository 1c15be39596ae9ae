"""pgbench as the limit row of kv on PostgreSQL (methodology: "Honesty rules").

pgbench, PostgreSQL's own C benchmark client, runs kv's select and update on the same
dbstand-owned table from a custom script (a uniformly random id drawn by `\\set`),
one connection, R transactions per iteration, `-M simple` or `-M prepared` as the
two protocols. An iteration's time is R divided by pgbench's tps (which excludes its
connection set-up); latencies come from its per-transaction log. The password goes
through a 0600 password file (targets/postgresql/pgbench.py), never on its command
line or in its environment.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbstand.engine.executor import Executor, IterationResult, Prepared
from dbstand.errors import CaseFailed, UserError
from dbstand.targets.postgresql.pgbench import (
    connection_args,
    find_pgbench,
    pgbench_version,
    read_latencies,
    run_pgbench,
)
from dbstand.workloads.kv.adapters.external import ExternalKv
from dbstand.workloads.kv.adapters.psycopg import PsycopgKv

OPS = ("select", "update")


class _PgbenchRun(Prepared):
    def __init__(self, argv: list[str], env: dict[str, str], folder: Path, prefix: str):
        self.argv, self.env, self.folder, self.prefix = argv, env, folder, prefix

    def execute(self) -> IterationResult:
        summary, _ = run_pgbench(self.argv, self.env)
        processed = int(summary["processed"])
        elapsed_ns = round(processed / summary["tps"] * 1e9)
        return IterationResult(elapsed_ns, processed, read_latencies(self.folder, self.prefix))


class PgbenchExecutor(Executor):
    """Runs each iteration as one pgbench process with R transactions."""

    timed = ("pgbench: iteration time = transactions / pgbench's tps (its connection "
             "set-up excluded); probes bracket the whole pgbench process")

    def __init__(self, client: PgbenchKv, op: str, rows: int):
        self.folder = Path(tempfile.mkdtemp(prefix="dbstand-pgbench-"))
        super().__init__([lambda: shutil.rmtree(self.folder, ignore_errors=True)])
        self.client, self.op, self.rows = client, op, rows
        self.binary = find_pgbench()
        self.runs = 0

    def _script(self, run: int) -> Path:
        table = self.client.table
        if self.op == "select":
            body = f"SELECT id, name FROM {table} WHERE id = :id;"
        else:
            body = f"UPDATE {table} SET name = '{self.client.update_name(run)}' WHERE id = :id;"
        path = self.folder / f"{self.op}-{run}.sql"
        path.write_text(f"\\set id random(1, :rows)\n{body}\n")
        return path

    def prepare(self, args: Sequence[Any], every: int, rng: random.Random) -> Prepared:
        run = self.client.run_index = self.runs
        self.runs += 1
        t = self.client.target
        connect, env = connection_args(t, self.folder)
        argv = [str(self.binary), "-n", *connect, "-M", self.client.protocol or "simple",
                "-c", "1", "-j", "1", "-t", str(len(args)), "-D", f"rows={self.rows}",
                "-f", str(self._script(run))]
        prefix = f"log{run}"
        if every:
            argv += ["-l", f"--log-prefix={self.folder / prefix}"]
            if every > 1:
                argv.append(f"--sampling-rate={1 / every:.6f}")
        argv.append(t.database or t.user or "postgres")
        return _PgbenchRun(argv, env, self.folder, prefix)


class PgbenchKv(ExternalKv, PsycopgKv):
    """The table through psycopg (untimed); the timed work through pgbench."""

    stack = "pgbench"
    protocol: str | None = "simple"
    run_index = 0
    measured_op = "select"
    rows = 0

    @classmethod
    def check_case(cls, op: str, mode: str, params: dict[str, Any]) -> None:
        """Refuse what pgbench's limit row does not cover, in one line, before any run."""
        if op not in OPS:
            raise UserError(f"stack 'pgbench' runs only the limit row's operations "
                            f"({', '.join(OPS)}), not {op!r}")
        if mode != "sync":
            raise UserError(f"stack 'pgbench' runs one connection (mode sync), not {mode!r}")
        if params.get("distribution", "uniform") != "uniform":
            raise UserError("stack 'pgbench' draws keys uniformly only "
                            "(--distribution uniform)")
        find_pgbench()

    def update_name(self, run: int) -> str:
        return f"pgbench_{run}"

    def executor(self, op: str, rows: int) -> Executor:
        self.measured_op, self.rows = op, rows
        return PgbenchExecutor(self, op, rows)

    def after_iteration(self, index: int, args: Sequence[Any]) -> None:
        if self.measured_op == "update":
            renamed = self.count("name = ?", (self.update_name(self.run_index),))
            if renamed == 0:
                raise CaseFailed("pgbench update did not take effect: no row renamed")
        rows = self.count()
        if rows != self.rows:
            raise CaseFailed(f"pgbench {self.measured_op}: {rows} rows, expected {self.rows}")

    def describe(self) -> str:
        return f"{pgbench_version(find_pgbench())}, -M {self.protocol}, 1 connection"

    def details(self) -> dict[str, Any]:
        return {"limit": True}
