"""Workload `python`: the user's own function, one call per operation, on connections
of the chosen stack that dbstand opens (docs/python-bench.md).

The connections are the script workload's sessions (the same driver code, autocommit);
`setup` and `teardown` run untimed on one more connection of the same stack, before
and after the measurement (teardown also when it failed).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.engine.executor import Executor, SyncExecutor
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.executors import AsyncioExecutor, ThreadExecutor
from dbstand.modes.pinning import pinned
from dbstand.modes.processes import ProcessExecutor
from dbstand.modes.spec import ModeSpec, parse_mode
from dbstand.network.route import proxy_probe
from dbstand.probes.case import CaseProbes
from dbstand.probes.locate import server_pid
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.admin import admin_client
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload
from dbstand.workloads.catalog import StackSpec, get_stack
from dbstand.workloads.python.benchfile import BenchFile, load_bench
from dbstand.workloads.python.options import PythonOptions
from dbstand.workloads.script.sessions import open_async, open_sync


def _sync_op(bench: BenchFile, conn: Any, rng: random.Random) -> Callable[[Any], object]:
    fn = bench.operation

    def op(_arg: object) -> None:
        try:
            fn(conn, rng)
        except Exception as exc:
            raise bench.failed(exc) from None
    return op


def _async_op(bench: BenchFile, conn: Any, rng: random.Random
              ) -> Callable[[Any], Awaitable[object]]:
    fn = bench.operation

    async def op(_arg: object) -> None:
        try:
            await fn(conn, rng)
        except Exception as exc:
            raise bench.failed(exc) from None
    return op


def _sync_executor(bench: BenchFile, cls: Any, target: TargetURL, n: int, seed: int,
                   threads: bool) -> Executor:
    sessions = open_sync(lambda i: cls([], {}, 0), target, n)
    ops = [_sync_op(bench, s.conn, random.Random(seed + i)) for i, s in enumerate(sessions)]
    closers = [s.close for s in sessions]
    return ThreadExecutor(ops, closers) if threads else SyncExecutor(ops[0], closers)


def _asyncio_executor(bench: BenchFile, cls: Any, target: TargetURL, n: int, seed: int,
                      loop_name: str) -> AsyncioExecutor:
    loop, sessions = open_async(lambda i: cls([], {}, 0), target, n, loop_name)
    ops = [_async_op(bench, s.conn, random.Random(seed + i)) for i, s in enumerate(sessions)]
    return AsyncioExecutor(loop, ops, [s.close for s in sessions])


@dataclass(frozen=True)
class PythonWorkerFactory:
    """What a worker process needs: it loads the bench file by its path (pickled to it)."""

    file: str
    stack: str
    target: str          # with password: travels through a pipe, never argv
    seed: int
    coroutines: int
    loop_name: str

    def build(self) -> Executor:
        bench = load_bench(self.file)
        cls = get_stack(self.stack).load("script")
        target = parse_target_url(self.target)
        seed = self.seed + 1000 * os.getpid()  # each worker its own random stream
        if self.coroutines:
            return _asyncio_executor(bench, cls, target, self.coroutines, seed,
                                     self.loop_name)
        return _sync_executor(bench, cls, target, 1, seed, threads=False)


def _never(_arg: object) -> None:
    raise CaseFailed("the python workload's operations run through its executor")


class PythonWorkload(Workload):
    name = "python"
    description = "your own Python function, one call per operation, on dbstand's connections"
    operations = ("operation",)

    def __init__(self, options: PythonOptions | None = None):
        self.options = options or PythonOptions()
        self.bench = load_bench(self.options.file)  # a bad file fails before any results

    def preflight(self, cases: list[Case]) -> None:
        for case in cases:
            spec = get_stack(case.stack)
            if "script" not in spec.adapters or spec.name.startswith("pgbench"):
                raise UserError(f"stack {case.stack!r} gives no Python connection (use a "
                                "driver: psycopg, psycopg2, asyncpg, psycopg-async, "
                                "pymysql, sqlite3, ...)")
            if not spec.talks_to(case.target):
                raise UserError(f"stack {case.stack!r} cannot talk to {case.target.kind} "
                                f"targets (it supports: {', '.join(spec.targets)})")
            spec.require()
            if self.bench.is_async != spec.is_async:
                kind = "async def" if self.bench.is_async else "def"
                raise UserError(f"{self.bench.path}: operation is `{kind}` but stack "
                                f"{spec.name!r} is {'asyncio' if spec.is_async else 'sync'}: "
                                f"use {'an asyncio' if self.bench.is_async else 'a sync'} "
                                "stack")
            mode = parse_mode(case.mode)
            if mode.is_async != spec.is_async or mode.shared:
                fits = ("asyncio:N or processes:PxAsyncio:N" if spec.is_async
                        else "sync, threads:N or processes:P")
                raise UserError(f"--mode {case.mode} does not fit stack {spec.name!r} "
                                f"({fits})")
            if case.target.is_memory and mode.kind != "sync":
                raise UserError(f"--mode {case.mode}: an in-memory SQLite database is one "
                                "connection's; give a file (sqlite:///bench.db)")
        for case in {c.target.secret(): c for c in cases}.values():
            self._hook(case, None)  # the target answers; credentials work

    def _hook(self, case: Case, fn: Callable[..., Any] | None) -> None:
        """Run setup or teardown (or just connect, with None) on one more connection."""
        cls = get_stack(case.stack).load("script")
        session = cls([], {}, 0)
        if not cls.is_async:
            session.open(case.target)
            try:
                if fn is not None:
                    fn(session.conn)
            except Exception as exc:
                raise self.bench.failed(exc) from None
            finally:
                session.close()
            return

        async def run() -> None:
            await session.open(case.target)
            try:
                if fn is not None:
                    await fn(session.conn)
            except Exception as exc:
                raise self.bench.failed(exc) from None
            finally:
                await session.close()
        asyncio.run(run())

    def _executor(self, spec: StackSpec, case: Case, mode: ModeSpec, config: EngineConfig
                  ) -> Executor:
        cls = spec.load("script")
        loop = str(case.params.get("loop", "asyncio"))
        if mode.kind == "processes":
            factory = PythonWorkerFactory(str(self.bench.path), spec.name,
                                          case.target.secret(), config.seed,
                                          mode.coroutines, loop)
            return ProcessExecutor(mode.workers, factory, gc_off=config.gc_off)
        if mode.kind == "asyncio":
            return _asyncio_executor(self.bench, cls, case.target, mode.workers,
                                     config.seed, loop)
        return _sync_executor(self.bench, cls, case.target, mode.workers, config.seed,
                              threads=mode.kind == "threads")

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        spec = get_stack(case.stack)
        mode = parse_mode(case.mode)
        if self.bench.setup is not None:
            self._hook(case, self.bench.setup)
        try:
            executor = self._executor(spec, case, mode, config)
            probes = (CaseProbes(case.target, "dbstand_", admin=admin_client,
                                 proxy=proxy_probe(case.target))
                      if case.params.get("probes", True) else None)
            placement = None if mode.kind == "processes" else (
                "separate" if mode.concurrency > 1 else self.options.pin_cpus)
            want = self.options.pin and placement is not None
            pid = server_pid(case.target)[0] if want else None
            try:
                with pinned(pid, want, "not pinned: processes mode",
                            placement or self.options.pin_cpus) as pins:
                    measurement = run_benchmark(Benchmark(case.op, _never,
                                                          lambda i: range(config.revs)),
                                                config, progress, executor, probes,
                                                probes.warmup if probes else None)
                probed = (probes.result(config.revs, measurement.warmup_iterations)
                          if probes else None)
            finally:
                executor.close()
                if probes is not None:
                    probes.close()
        finally:
            if self.bench.teardown is not None:
                self._hook(case, self.bench.teardown)
        metrics: dict[str, Any] = {
            "measurement": measurement, "bench_file": str(self.bench.path),
            "client": spec.description,
            "mode_detail": {"kind": mode.kind, "concurrency": mode.concurrency,
                            "connections": mode.connections, "timed": executor.timed},
        }
        if probed is not None:
            metrics["probes"] = probed
        return CaseOutcome(metrics=metrics, server={"cpu_pinning": pins.record()},
                           packages=spec.versions())
