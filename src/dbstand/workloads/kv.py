"""Workload `kv`: single-key CRUD through a connector (specs/kv.md).

Each operation is its own benchmark on a fresh dbstand-owned table of `rows` rows.
Arguments are built before each iteration and the table is put back after it, so
every iteration does the same work; after each iteration the workload checks
through the same connection that the operations really happened.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.spec import parse_mode
from dbstand.stacks.base import KvClient
from dbstand.stacks.registry import get_stack
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload
from dbstand.workloads.keys import DISTRIBUTIONS, key_chooser
from dbstand.workloads.kv_executors import build_executor, check_mode, mode_record

OPS = ("select", "insert", "update", "upsert", "replace", "delete")
DEFAULT_ROWS = 10_000
VERIFY_SAMPLE = 25


def _prefix(case: Case) -> str:
    return str(case.params.get("prefix", "dbstand_"))


def open_admin_client(case: Case) -> KvClient:
    """The case's synchronous connection: the stack itself, or for an asyncio stack
    the sync stack it names for untimed data management."""
    spec = get_stack(case.stack)
    client_cls = spec.load("kv")
    if spec.is_async:
        client_cls = get_stack(client_cls.admin_stack).load("kv")
    client: KvClient = client_cls(case.target, _prefix(case))
    client.connect()
    return client


class KvBenchmark:
    """Builds the engine's Benchmark for one op, with per-iteration verify/restore."""

    def __init__(self, client: KvClient, op: str, rows: int, revs: int,
                 distribution: str, seed: int):
        self.client = client
        self.op = op
        self.rows = rows
        self.revs = revs
        self.rng = random.Random(seed)
        self.keys = key_chooser(distribution, rows, self.rng)

    def make_args(self, i: int) -> Sequence[Any]:
        n, op = self.revs, self.op
        if op == "select":
            return [(k,) for k in self.keys(n)]
        if op == "insert":
            return [(f"tuple_{self.rows + j + 1}",) for j in range(n)]
        if op == "update":
            return [(f"u{i}_{k}", k) for k in self.keys(n)]
        if op in ("upsert", "replace"):
            return [(k, f"v{i}_{k}") for k in self.keys(n)]
        if op == "delete":
            return [(k,) for k in self.rng.sample(range(1, self.rows + 1), n)]
        raise CaseFailed(f"unknown kv operation {op!r}")

    def after_iteration(self, i: int, args: Sequence[Any]) -> None:
        c, op = self.client, self.op
        if op == "select":
            self._check_selects(args[:VERIFY_SAMPLE])
        elif op == "insert":
            self._expect(c.count(), self.rows + self.revs, "rows after inserts")
            c.delete_above(self.rows)
        elif op == "update":
            self._check_names([(k, name) for name, k in args[:VERIFY_SAMPLE]])
        elif op in ("upsert", "replace"):
            self._check_names([(k, name) for k, name in args[:VERIFY_SAMPLE]])
            self._expect(c.count(), self.rows, "rows after upserts (all hits)")
        elif op == "delete":
            self._expect(c.count(), self.rows - self.revs, "rows after deletes")
            c.fill(sorted((k, f"tuple_{k}") for (k,) in args))
        if op != "insert":
            self._expect(c.count(), self.rows, "rows after restoring")

    def _check_selects(self, args: Sequence[Any]) -> None:
        select = self.client.operation("select")
        for params in args:
            row = select(params)
            if row is None or int(row[0]) != params[0]:
                raise CaseFailed(f"select of id {params[0]} returned {row!r}")

    def _check_names(self, expected: list[tuple[int, str]]) -> None:
        # the last write to a key wins: keep the last expected name per key
        last = dict(expected)
        got = self.client.fetch_names(list(last))
        wrong = {k: (v, got.get(k)) for k, v in last.items() if got.get(k) != v}
        if wrong:
            key, (want, have) = next(iter(wrong.items()))
            raise CaseFailed(f"{self.op} did not take effect: id {key} has {have!r}, "
                             f"expected {want!r} ({len(wrong)} of {len(last)} checked rows)")

    def _expect(self, got: int, want: int, what: str) -> None:
        if got != want:
            raise CaseFailed(f"{self.op}: {what}: {got}, expected {want}")

    def benchmark(self) -> Benchmark:
        return Benchmark(self.op, self.client.operation(self.op), self.make_args,
                         self.after_iteration)


class KvWorkload(Workload):
    name = "kv"
    description = "single-key CRUD by random key: select, insert, update, upsert, replace, delete"
    operations = OPS

    def preflight(self, cases: list[Case]) -> None:
        seen: set[tuple[str, str]] = set()
        for case in cases:
            spec = get_stack(case.stack)
            if "kv" not in spec.adapters:
                raise UserError(f"stack {case.stack!r} does not implement kv yet "
                                f"(it does: {', '.join(spec.adapters) or 'nothing yet'})")
            if case.target.kind not in spec.targets:
                raise UserError(f"stack {case.stack!r} cannot talk to {case.target.kind} "
                                f"targets (it supports: {', '.join(spec.targets)})")
            if case.op not in OPS:
                raise UserError(f"unknown kv operation {case.op!r} (known: {', '.join(OPS)})")
            mode = parse_mode(case.mode)
            if case.params["distribution"] not in DISTRIBUTIONS:
                raise UserError(f"unknown key distribution {case.params['distribution']!r} "
                                f"(known: {', '.join(DISTRIBUTIONS)})")
            rows = case.params["rows"]
            if rows < 1:
                raise UserError("--rows must be at least 1")
            if case.op == "delete" and case.params["revs"] > rows:
                raise UserError(f"delete removes each key at most once per iteration: --revs "
                                f"({case.params['revs']}) cannot exceed --rows ({rows})")
            spec.require()
            check_mode(spec, mode, case.params["revs"])
            key = (case.stack, case.target.secret())
            if key not in seen:
                seen.add(key)
                client = open_admin_client(case)  # proves reachability and credentials
                try:
                    client.check_ownership()
                finally:
                    client.close()
                if spec.is_async:
                    executor = build_executor(spec, case.target, _prefix(case), "select",
                                              parse_mode("asyncio:1"), None,
                                              case.params.get("loop", "asyncio"))
                    executor.close()  # the asyncio driver itself can connect

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        spec = get_stack(case.stack)
        mode = parse_mode(case.mode)
        client = open_admin_client(case)
        rows = case.params["rows"]
        packages = spec.versions()
        try:
            server = client.server_facts()
            if spec.is_async:
                admin_spec = get_stack(spec.load("kv").admin_stack)
                packages.update(admin_spec.versions())
                server["admin_stack"] = admin_spec.name
            client.create_table()
            client.fill((k, f"tuple_{k}") for k in range(1, rows + 1))
            kv = KvBenchmark(client, case.op, rows, config.revs,
                             case.params["distribution"], config.seed)
            executor = build_executor(spec, case.target, _prefix(case), case.op, mode, client,
                                      case.params.get("loop", "asyncio"), config.gc_off)
            try:
                measurement = run_benchmark(kv.benchmark(), config, progress, executor)
            finally:
                executor.close()
            if not case.params.get("keep"):
                client.drop_table()
        finally:
            client.close()
        metrics: dict[str, Any] = {"measurement": measurement,
                                   "op_form": client.forms().get(case.op, ""),
                                   "mode_detail": mode_record(mode, executor)}
        if case.op in ("upsert", "replace"):
            metrics["key_paths"] = "all hits (keys drawn from existing rows)"
        return CaseOutcome(metrics=metrics, server=server, packages=packages)
