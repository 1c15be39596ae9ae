"""Workload `script`: the user's own transaction, in pgbench's script language, through
every driver that can speak to the target, in every mode, under the stop rule.

One operation is one transaction of the weighted mix of scripts. Each connection keeps
its own per-statement counts and times (pgbench -r); the case's record holds them
merged. With `--init`, pgbench's tables are created under their own names, registered
as dbstand's and dropped at the end (unless --keep); without it, the scripts run on the
user's tables, which dbstand neither creates nor drops. After each case of a built-in
that moves money, the balances are checked against the history.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.engine.executor import Executor, SyncExecutor
from dbstand.errors import CaseFailed, MissingDependencyError, UserError
from dbstand.modes.executors import AsyncioExecutor, ThreadExecutor
from dbstand.modes.pinning import pinned
from dbstand.modes.processes import ProcessExecutor
from dbstand.modes.spec import ModeSpec, parse_mode
from dbstand.network.route import proxy_probe
from dbstand.probes.case import CaseProbes
from dbstand.probes.locate import server_pid
from dbstand.sql.bulk import analyze
from dbstand.sql.dialects import dialect_for
from dbstand.sql.ownership import Ownership
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.admin import admin_client
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload
from dbstand.workloads.catalog import StackSpec, get_stack
from dbstand.workloads.script.builtin import BALANCES, BUILTINS, CHECKED, TABLES, ddl, fill_sql
from dbstand.workloads.script.options import ScriptOptions
from dbstand.workloads.script.parse import Script, load_script
from dbstand.workloads.script.sessions import (
    AsyncSession,
    StatementStats,
    SyncSession,
    open_async,
    open_sync,
)


def case_spec(case: Case) -> StackSpec:
    spec = get_stack(case.stack)
    protocol = case.params.get("protocol")
    if protocol and spec.protocol is None:
        spec = spec.variant(protocol=protocol)
    return spec


def admin_session(target: TargetURL, scripts: Sequence[Script]) -> SyncSession:
    """An untimed connection of the kind's first installed admin stack (caller closes)."""
    kind = get_kind(target.kind)
    for name in kind.admin_stacks:
        spec = get_stack(name)
        if spec.installed and "script" in spec.adapters:
            session: SyncSession = spec.load("script")(scripts, {}, 0)
            session.open(target)
            return session
    raise MissingDependencyError(f"no driver installed to reach {target.redacted()} "
                                 f"(any of {', '.join(kind.admin_stacks) or 'none'})")


def _scalar(session: SyncSession, sql: str) -> Any:
    cur = session.conn.cursor()
    try:
        cur.execute(sql)
        row = cur.fetchone()
        return row[0] if row else None
    finally:
        cur.close()


@dataclass(frozen=True)
class ScriptWorkerFactory:
    """What a worker process needs to open its sessions (pickled to it)."""

    stack: str
    target: str          # with password: travels through a pipe, never argv
    files: tuple[str, ...]
    defines: tuple[tuple[str, Any], ...]
    seed: int
    coroutines: int
    loop_name: str

    def build(self) -> Executor:
        scripts = [load_script(f, BUILTINS) for f in self.files]
        cls = get_stack(self.stack).load("script")
        target = parse_target_url(self.target)
        # each worker its own random stream; :client_id counts within the worker
        seed = self.seed + 1000 * os.getpid()
        if self.coroutines:
            return _asyncio_executor(cls, target, scripts, dict(self.defines), seed,
                                     self.coroutines, self.loop_name, [])
        session = cls(scripts, {**dict(self.defines), "client_id": 0}, seed)
        session.open(target)
        return SyncExecutor(session.operation, [session.close])


def _asyncio_executor(cls: type[AsyncSession], target: TargetURL, scripts: list[Script],
                      defines: dict[str, Any], seed: int, n: int, loop_name: str,
                      sessions: list[Any]) -> AsyncioExecutor:
    loop, opened = open_async(
        lambda i: cls(scripts, {**defines, "client_id": i}, seed + i), target, n, loop_name)
    sessions.extend(opened)
    return AsyncioExecutor(loop, [s.operation for s in opened], [s.close for s in opened])


class ScriptWorkload(Workload):
    name = "script"
    description = "your own transactions in pgbench's script language, through every driver"
    operations = ("transaction",)

    def __init__(self, options: ScriptOptions | None = None):
        self.options = options or ScriptOptions()
        self.scripts = [load_script(f, BUILTINS) for f in self.options.files]
        self.uses_builtin = any(s.name in BUILTINS for s in self.scripts)
        if not any(s.weight for s in self.scripts):
            raise UserError("--file: at least one script needs a weight above 0")
        self._ready: dict[str, int] = {}       # target -> the scale its tables have
        self._made: dict[str, TargetURL] = {}  # targets whose tables --init made

    # --- before anything runs ---------------------------------------------------
    def preflight(self, cases: list[Case]) -> None:
        seen: set[str] = set()
        for case in cases:
            spec = case_spec(case)
            if "script" not in spec.adapters:
                runs = [n for n, s in _stacks_with_scripts().items()]
                raise UserError(f"stack {case.stack!r} does not run scripts (those that "
                                f"do: {', '.join(runs)})")
            if not spec.talks_to(case.target):
                raise UserError(f"stack {case.stack!r} cannot talk to {case.target.kind} "
                                f"targets (it supports: {', '.join(spec.targets)})")
            spec.require()
            mode = parse_mode(case.mode)
            _check_mode(spec, mode, case)
            if case.target.is_memory and mode.kind != "sync":
                raise UserError(f"--mode {case.mode}: an in-memory SQLite database is one "
                                "connection's; give a file (sqlite:///bench.db)")
            key = case.target.secret()
            if key in seen:
                continue
            seen.add(key)
            admin = admin_session(case.target, self.scripts)
            try:
                self._check_tables(admin, case.target)
            finally:
                admin.close()

    def _check_tables(self, admin: SyncSession, target: TargetURL) -> None:
        owner = self._ownership(admin, target)
        if self.options.init:
            if target.dialect is None:
                raise UserError(f"--init makes pgbench's tables on SQL databases, not "
                                f"{target.kind}")
            for table in TABLES:
                owner.check(table)  # someone else's pgbench_accounts: refused here
        elif self.uses_builtin:
            missing = [t for t in TABLES if not owner.exists(t)]
            if missing:
                raise UserError(f"the built-in scripts need pgbench's tables; "
                                f"{', '.join(missing)} missing on {target.redacted()}: "
                                "add --init --scale N (dbstand creates, fills and drops "
                                "them)")

    def _ownership(self, admin: SyncSession, target: TargetURL) -> Ownership:
        return Ownership(admin.conn.cursor(), dialect_for(target.kind),
                         admin.style, self.options.prefix)

    # --- tables -------------------------------------------------------------------
    def _prepare_tables(self, admin: SyncSession, target: TargetURL) -> int:
        """Make pgbench's tables once per target (--init); the scale `:scale` takes."""
        key = target.secret()
        if key in self._ready:
            return self._ready[key]
        scale = self.options.scale
        if self.options.init:
            scale = scale or 1
            owner = self._ownership(admin, target)
            dialect = dialect_for(target.kind)
            cur = admin.conn.cursor()
            for table in TABLES:
                owner.create(table, ddl(table, dialect), "script", verbatim=True)
                fill = fill_sql(table, scale, dialect)
                if fill:
                    cur.execute(fill)
            for table in TABLES:  # as after any load (sql/bulk.py): the dialect's form
                analyze(cur, target.kind, table)
            self._made[key] = target
        elif scale is None:
            exists = self._ownership(admin, target).exists("pgbench_branches")
            scale = int(_scalar(admin, "SELECT count(*) FROM pgbench_branches")
                        ) if exists else 1
        self._ready[key] = scale
        return scale

    def balance_check(self, admin: SyncSession) -> dict[str, Any] | None:
        """Each changed balance table sums to the history's deltas (built-ins only)."""
        names = {s.name for s in self.scripts}
        if not names <= set(BUILTINS):
            return None
        tables = sorted({t for n in names for t in CHECKED.get(n, ())})
        if not tables:
            return None
        sums = {t: int(_scalar(admin, f"SELECT COALESCE(SUM({BALANCES[t]}), 0) FROM {t}"))
                for t in [*tables, "pgbench_history"]}
        history = sums.pop("pgbench_history")
        wrong = {t: v for t, v in sums.items() if v != history}
        if wrong:
            table, value = next(iter(wrong.items()))
            raise CaseFailed(f"balances inconsistent: sum of {table}.{BALANCES[table]} is "
                             f"{value}, the history's deltas sum to {history}")
        return {"history_delta_sum": history, "balance_sums": sums, "consistent": True}

    # --- one case ---------------------------------------------------------------------
    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        spec = case_spec(case)
        mode = parse_mode(case.mode)
        admin = admin_session(case.target, self.scripts)
        try:
            scale = self._prepare_tables(admin, case.target)
            defines: dict[str, Any] = {"scale": scale, **dict(self.options.defines)}
            server = _server_facts(admin, case.target)
            sessions: list[Any] = []
            executor = self._executor(spec, case, mode, defines, config, sessions)
            bench = Benchmark(case.op, _never, lambda i: range(config.revs))
            probes = _probes(case, spec)
            placement = None if mode.kind == "processes" else (
                "separate" if mode.concurrency > 1 else self.options.pin_cpus)
            want = self.options.pin and placement is not None and not _is_pgbench(spec)
            pid = server_pid(case.target)[0] if want else None
            try:
                with pinned(pid, want, "not pinned: processes or an external client",
                            placement or self.options.pin_cpus) as pins:
                    measurement = run_benchmark(bench, config, progress, executor, probes,
                                                probes.warmup if probes else None)
                server["cpu_pinning"] = pins.record()
                probed = (probes.result(config.revs, measurement.warmup_iterations)
                          if probes else None)
            finally:
                executor.close()
                if probes is not None:
                    probes.close()
            balances = self.balance_check(admin) if self.uses_builtin else None
        finally:
            admin.close()
        metrics: dict[str, Any] = {
            "measurement": measurement,
            "scripts": [{"name": s.name, "weight": s.weight} for s in self.scripts],
            "statements": self._statement_rows(executor, sessions, mode),
            "mode_detail": {"kind": mode.kind, "concurrency": mode.concurrency,
                            "connections": mode.connections, "timed": executor.timed},
            "client": _describe(spec, case),
            "defines": {k: v for k, v in defines.items()},
        }
        if _is_pgbench(spec):
            metrics["limit"] = True
        if probed is not None:
            metrics["probes"] = probed
        if balances is not None:
            metrics["balance_check"] = balances
        return CaseOutcome(metrics=metrics, server=server, packages=spec.versions())

    def _executor(self, spec: StackSpec, case: Case, mode: ModeSpec, defines: dict[str, Any],
                  config: EngineConfig, sessions: list[Any]) -> Executor:
        if _is_pgbench(spec):
            from dbstand.workloads.script.pgbench import PgbenchScriptExecutor

            return PgbenchScriptExecutor(case.target, self.scripts, defines,
                                         case.params.get("protocol") or "prepared",
                                         mode.concurrency)
        cls = spec.load("script")
        seed = config.seed
        if mode.kind == "processes":
            factory = ScriptWorkerFactory(spec.name, case.target.secret(),
                                          self.options.files, tuple(defines.items()), seed,
                                          mode.coroutines, case.params.get("loop", "asyncio"))
            return ProcessExecutor(mode.workers, factory, gc_off=config.gc_off)
        if mode.kind == "asyncio":
            return _asyncio_executor(cls, case.target, self.scripts, defines, seed,
                                     mode.workers, case.params.get("loop", "asyncio"),
                                     sessions)
        opened = open_sync(lambda i: cls(self.scripts, {**defines, "client_id": i}, seed + i),
                           case.target, mode.workers if mode.kind == "threads" else 1)
        sessions.extend(opened)
        if mode.kind == "sync":
            return SyncExecutor(opened[0].operation, [opened[0].close])
        return ThreadExecutor([s.operation for s in opened], [s.close for s in opened])

    def _statement_rows(self, executor: Executor, sessions: list[Any], mode: ModeSpec
                        ) -> list[dict[str, Any]]:
        """Per command of each script: how often it ran and its mean latency (ms), over
        the whole case (warm-up included), as pgbench -r reports them."""
        from dbstand.workloads.script.pgbench import PgbenchScriptExecutor

        rows: list[dict[str, Any]] = []
        if isinstance(executor, PgbenchScriptExecutor):
            for s, script in enumerate(self.scripts):
                for pc, c in enumerate(script.commands):
                    total, n = executor.latency.get((s, pc), (0.0, 0))
                    rows.append({"script": script.name, "line": c.line, "command": c.text,
                                 "kind": c.kind, "count": None,
                                 "script_transactions": executor.transactions.get(s, 0),
                                 "mean_ms": round(total / n, 4) if n else None})
            return rows
        if mode.kind == "processes":
            return rows  # the counts stay in the worker processes
        stats = StatementStats()
        for session in sessions:
            stats.merge(session.stats)
        for s, script in enumerate(self.scripts):
            for pc, c in enumerate(script.commands):
                n = stats.counts.get((s, pc), 0)
                ns = stats.total_ns.get((s, pc), 0)
                rows.append({"script": script.name, "line": c.line, "command": c.text,
                             "kind": c.kind, "count": n,
                             "script_transactions": stats.transactions.get(s, 0),
                             "mean_ms": round(ns / n / 1e6, 4) if n and c.kind == "sql"
                             else None})
        return rows

    def close(self) -> None:
        """Drop the tables --init made (unless --keep), through the registry."""
        made, self._made = self._made, {}
        if self.options.keep:
            return
        for target in made.values():
            admin = admin_session(target, self.scripts)
            try:
                owner = self._ownership(admin, target)
                for table in reversed(list(TABLES)):
                    if owner.owns(table):
                        owner.drop(table)
            finally:
                admin.close()


def _is_pgbench(spec: StackSpec) -> bool:
    """The limit row (on any of its protocols): pgbench runs the scripts itself."""
    return spec.name.split("[")[0] == "pgbench"


def _never(_arg: object) -> None:
    raise CaseFailed("the script workload's operations run through its executor")


def _stacks_with_scripts() -> dict[str, StackSpec]:
    from dbstand.workloads.catalog import STACKS

    return {n: s for n, s in STACKS.items() if "script" in s.adapters}


def _check_mode(spec: StackSpec, mode: ModeSpec, case: Case) -> None:
    if _is_pgbench(spec):
        if mode.kind not in ("sync", "threads"):
            raise UserError(f"stack 'pgbench' runs sync (one connection) or threads:N "
                            f"(-c N -j N), not {case.mode!r}")
        return
    if mode.is_async and not spec.is_async:
        raise UserError(f"mode {mode.name} needs an asyncio stack; {spec.name!r} is "
                        "synchronous (use sync, threads:N or processes:P)")
    if not mode.is_async and spec.is_async:
        raise UserError(f"stack {spec.name!r} is asyncio-only: use asyncio:N or "
                        "processes:PxAsyncio:N")
    if mode.shared:
        raise UserError(f"--mode {mode.name}: a script's transaction needs its own "
                        "connection (drop +shared)")


def _server_facts(admin: SyncSession, target: TargetURL) -> dict[str, Any]:
    from dbstand.sql.dialects import server_facts

    cur = admin.conn.cursor()
    try:
        return server_facts(target.kind, cur)
    finally:
        cur.close()


def _describe(spec: StackSpec, case: Case) -> str:
    if _is_pgbench(spec):
        from dbstand.targets.postgresql.pgbench import find_pgbench, pgbench_version

        return f"{pgbench_version(find_pgbench())}, -M {case.params.get('protocol')}"
    return spec.description


def _probes(case: Case, spec: StackSpec) -> CaseProbes | None:
    if not case.params.get("probes", True):
        return None
    scope = "children" if _is_pgbench(spec) else "process"
    return CaseProbes(case.target, str(case.params.get("prefix", "dbstand_")),
                      client_scope=scope, admin=admin_client,
                      proxy=proxy_probe(case.target))
