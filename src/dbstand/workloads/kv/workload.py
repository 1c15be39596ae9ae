"""Workload `kv`: single-key CRUD through a connector (specs/kv.md).

Each operation is its own benchmark on a fresh dbstand-owned table of `rows` rows.
Arguments are built before each iteration and the table is put back after it, so
every iteration does the same work; after each iteration the workload checks
through the same connection that the operations really happened.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Sequence
from itertools import compress
from typing import Any

from dbstand.engine import Benchmark, EngineConfig
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.spec import parse_mode
from dbstand.network.route import proxy_probe
from dbstand.probes.case import CaseProbes
from dbstand.sql.bulk import KeyedRows
from dbstand.workloads.admin import admin_client
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload, prove_access
from dbstand.workloads.catalog import StackSpec, get_stack
from dbstand.workloads.kv.adapters.external import ExternalKv
from dbstand.workloads.kv.client import KvClient
from dbstand.workloads.kv.cluster import KvCluster, KvShareRecipe
from dbstand.workloads.kv.executors import build_executor, check_mode, mode_record
from dbstand.workloads.kv.keys import DISTRIBUTIONS, key_chooser
from dbstand.workloads.kv.options import KvOptions
from dbstand.workloads.measured import measure

OPS = ("select", "insert", "update", "upsert", "replace", "delete")
VERIFY_SAMPLE = 25
#: a row's name is this text and its id ("tuple_17"): the fill, inserts and restores
NAME = "tuple_"


def table_rows(rows: int) -> KeyedRows:
    """The table's initial rows, (id, name) for ids 1..rows: a pure function of the
    key, so a server that generates series makes them itself (sql/bulk.py)."""
    return KeyedRows(rows, (None, NAME))


def _prefix(case: Case) -> str:
    return str(case.params.get("prefix", "dbstand_"))


def case_spec(case: Case) -> StackSpec:
    """The case's stack on its protocol (`tarantool[sql]`) and, for stacks sitting on a
    driver, on the driver for the target (`sqlalchemy-orm+pymysql`)."""
    spec = get_stack(case.stack)
    protocol = case.params.get("protocol")
    if protocol and spec.protocol is None:
        spec = spec.variant(protocol=protocol)
    return spec.for_target(case.target.kind)


def open_admin_client(case: Case) -> KvClient:
    """The case's synchronous connection: the stack itself, or for an asyncio stack
    the sync stack it names for untimed data management."""
    spec = case_spec(case)
    client_cls = spec.load("kv")
    if spec.is_async:
        client_cls = get_stack(client_cls.admin_stack).load("kv")
    client: KvClient = client_cls(case.target, _prefix(case))
    client.connect()
    return client


def _async_forms(spec: StackSpec, case: Case) -> tuple[dict[str, str], str]:
    """Statement forms and description as the asyncio client itself states them
    (they can depend on the server: one short connection, outside any timing)."""
    cls = spec.load("kv")

    async def ask() -> tuple[dict[str, str], str]:
        client = cls(case.target, _prefix(case))
        await client.connect()
        try:
            return client.forms(), client.describe()
        finally:
            await client.close()

    return asyncio.run(ask())


def ascending(keys: Iterable[int], rows: int) -> list[int]:
    """Distinct keys from 1..rows in ascending order (delete's restore, in key order).
    When they are many next to `rows`, marked in a bytearray and read back in order: a
    seventh of `sorted`'s time for 50,000 keys, between every two delete iterations."""
    keys = list(keys)
    if len(keys) * 16 < rows:
        return sorted(keys)
    present = bytearray(rows + 1)
    for key in keys:
        present[key] = 1
    return list(compress(range(rows + 1), present))


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
        #: insert's arguments: the same names every iteration (the rows go after it)
        self._inserts: list[tuple[str]] | None = None

    def make_args(self, i: int) -> Sequence[Any]:
        """Iteration i's arguments. Built between iterations, so their cost is part of
        every run's wall time (issue 29): drawn in bulk, each string made once."""
        n, op = self.revs, self.op
        if op == "select":
            return list(zip(self.keys(n)))
        if op == "insert":
            if self._inserts is None:
                self._inserts = [(f"{NAME}{self.rows + j + 1}",) for j in range(n)]
            return self._inserts
        # a new name on every write, even to a key drawn twice: no stack may skip a
        # write as a no-op (an ORM's dirty check, MySQL's "0 rows changed")
        if op == "update":
            tag = f"u{i}_"
            return [(f"{tag}{j}_{k}", k) for j, k in enumerate(self.keys(n))]
        if op in ("upsert", "replace"):
            tag = f"v{i}_"
            return [(k, f"{tag}{j}_{k}") for j, k in enumerate(self.keys(n))]
        if op == "delete":
            return list(zip(self.rng.sample(range(1, self.rows + 1), n)))
        raise CaseFailed(f"unknown kv operation {op!r}")

    def after_iteration(self, i: int, args: Sequence[Any]) -> None:
        c, op = self.client, self.op
        if op == "select":
            self._check_selects(args[:VERIFY_SAMPLE])
        elif op == "insert":
            self._expect(c.count(), self.rows + self.revs, "rows after inserts")
            c.delete_above(self.rows)
        elif op == "update":
            self._check_names(args, key_at=1)
        elif op in ("upsert", "replace"):
            self._check_names(args, key_at=0)
            self._expect(c.count(), self.rows, "rows after upserts (all hits)")
        elif op == "delete":
            self._expect(c.count(), self.rows - self.revs, "rows after deletes")
            c.restore([(k, f"{NAME}{k}") for k in ascending((k for (k,) in args), self.rows)])
        if op not in ("insert", "select"):  # a select writes and restores nothing (and
            # a count of a large table would cost more than the iteration it checks)
            self._expect(c.count(), self.rows, "rows after restoring")

    def _check_selects(self, args: Sequence[Any]) -> None:
        select = self.client.operation("select")
        for params in args:
            row: Any = select(params)
            if row is None or int(row[0]) != params[0]:
                raise CaseFailed(f"select of id {params[0]} returned {row!r}")

    def _check_names(self, written: Sequence[Any], key_at: int) -> None:
        """The keys of the first writes hold a name this iteration wrote to them (with
        concurrent workers, which of a key's writes lands last is not defined).
        `written` is the iteration's arguments, the key at `key_at` and the name at the
        other place; only the checked keys' names are gathered (the whole iteration is
        scanned for them: a key drawn again later got a later name)."""
        name_at = 1 - key_at
        keys = list(dict.fromkeys(w[key_at] for w in written[:VERIFY_SAMPLE]))
        names: dict[int, set[str]] = {k: set() for k in keys}
        for w in written:
            if w[key_at] in names:
                names[w[key_at]].add(w[name_at])
        got = self.client.fetch_names(keys)
        wrong = {k: got.get(k) for k in keys if got.get(k) not in names[k]}
        if wrong:
            key, have = next(iter(wrong.items()))
            want = sorted(names[key])[0]
            raise CaseFailed(f"{self.op} did not take effect: id {key} has {have!r}, "
                             f"expected {want!r} ({len(wrong)} of {len(keys)} checked rows)")

    def _expect(self, got: int, want: int, what: str) -> None:
        if got != want:
            raise CaseFailed(f"{self.op}: {what}: {got}, expected {want}")

    def benchmark(self) -> Benchmark:
        return Benchmark(self.op, self.client.operation(self.op), self.make_args,
                         self.after_iteration)


#: the largest table kv fills (a bigger one is a load test of the fill, not of an op)
MAX_ROWS = 100_000_000
#: the most operations in one iteration (their arguments are drawn before it starts)
MAX_REVS = 10_000_000
#: bytes an iteration's argument list takes per operation, about (a tuple and an int)
_ARG_BYTES = 120


def check_sizes(rows: int, revs: int) -> None:
    """--rows and --revs within bounds, and an iteration's arguments within memory:
    one clear line instead of a MemoryError (or a machine swapping) mid-run."""
    if rows > MAX_ROWS:
        raise UserError(f"--rows must be at most {MAX_ROWS:,} (got {rows:,})")
    if revs > MAX_REVS:
        raise UserError(f"--revs must be at most {MAX_REVS:,} (got {revs:,}): "
                        "more iterations measure as well as longer ones")
    import psutil

    need = revs * _ARG_BYTES
    available = psutil.virtual_memory().available
    if need > available // 2:
        raise UserError(f"--revs {revs:,} needs about {need / 2**20:,.0f} MiB for an "
                        f"iteration's arguments; {available / 2**20:,.0f} MiB are free: "
                        "use fewer revs")


class KvWorkload(Workload):
    name = "kv"
    description = "single-key CRUD by random key: select, insert, update, upsert, replace, delete"
    operations = OPS

    def __init__(self, options: KvOptions | None = None):
        self.options = options or KvOptions()
        #: with `--cluster`: the session opened at preflight (workloads/kv/cluster.py)
        self.cluster: KvCluster | None = (KvCluster(self.options.cluster)
                                          if self.options.cluster else None)

    def preflight(self, cases: list[Case]) -> None:
        seen: set[tuple[str, str]] = set()
        for case in cases:
            spec = case_spec(case)
            if "kv" not in spec.adapters:
                raise UserError(f"stack {case.stack!r} does not implement kv yet "
                                f"(it does: {', '.join(spec.adapters) or 'nothing yet'})")
            if not spec.talks_to(case.target):
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
            check_sizes(rows, case.params["revs"])
            if case.target.is_memory and mode.kind != "sync":
                raise UserError(
                    f"--mode {case.mode}: an in-memory SQLite database belongs to the one "
                    "connection that opened it, so other threads, tasks or processes would "
                    "not see its table; give a file (sqlite:///kv.db) or --mode sync")
            if case.op == "delete" and case.params["revs"] > rows:
                raise UserError(f"delete removes each key at most once per iteration: --revs "
                                f"({case.params['revs']}) cannot exceed --rows ({rows})")
            spec.require()
            check_case = getattr(spec.load("kv"), "check_case", None)
            if check_case is not None:  # what only this stack refuses (pgbench: its ops)
                check_case(case.op, case.mode, case.params)
            check_mode(spec, mode, case.params["revs"])
            key = (case.stack, case.target.secret())
            if key not in seen:
                seen.add(key)
                prove_access(open_admin_client(case))
                if spec.is_async:
                    executor = build_executor(spec, case.target, _prefix(case), "select",
                                              parse_mode("asyncio:1"), None,
                                              case.params.get("loop", "asyncio"))
                    executor.close()  # the asyncio driver itself can connect
        if self.cluster is not None:
            self.cluster.check(cases, [case_spec(c) for c in cases])
            self.cluster.open(cases)

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        spec = case_spec(case)
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
            loaded = client.fill(table_rows(rows), lambda done, _total: progress(done, rows))
            kv = KvBenchmark(client, case.op, rows, config.revs,
                             case.params["distribution"], config.seed)
            bench = kv.benchmark()
            if isinstance(client, ExternalKv):  # pgbench: another program does the work
                executor = client.executor(case.op, rows)
                bench.after_iteration = client.after_iteration
            elif self.cluster is not None:
                executor = self.cluster.executor(KvShareRecipe(
                    spec, case.target.secret(), _prefix(case), case.op, mode,
                    case.params.get("loop", "asyncio"), config.gc_off))
            else:
                executor = build_executor(spec, case.target, _prefix(case), case.op, mode,
                                          client, case.params.get("loop", "asyncio"),
                                          config.gc_off)
            # one placement for every mode: a table's ratios compare like with like
            measurement, probed, server["cpu_pinning"] = measure(
                case, bench, config, progress, executor, lambda: _probes(case, client),
                want=self.options.pin, placement=self.options.pin_cpus)
            if not case.params.get("keep"):
                client.drop_table()
        finally:
            client.close()
        forms, described = (_async_forms(spec, case) if spec.is_async
                            else (client.forms(), None))
        metrics: dict[str, Any] = {"measurement": measurement,
                                   "op_form": forms.get(case.op, ""),
                                   "mode_detail": mode_record(mode, executor)}
        if described:
            metrics["client"] = described
        if not spec.is_async:
            metrics["client"] = client.describe()
            metrics.update(client.details())
        metrics["data_load"] = loaded.record()
        if probed is not None:
            metrics["probes"] = probed
        if case.op in ("upsert", "replace"):
            metrics["key_paths"] = "all hits (keys drawn from existing rows)"
        if measurement.bimodal is not None:
            metrics["bimodal"] = measurement.bimodal.as_dict(config.revs)
        if self.options.baseline:
            metrics["baseline"] = self.options.baseline
        if self.cluster is not None:
            metrics["cluster"] = self.cluster.report(executor, case.label(), measurement)
        return CaseOutcome(metrics=metrics, server=server, packages=packages)

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.close()


def _probes(case: Case, client: KvClient) -> CaseProbes | None:
    """The case's probes (`--no-probes` turns them off)."""
    if not case.params.get("probes", True):
        return None
    scope = getattr(client, "client_cpu_scope", "process")
    conn = getattr(client, "conn", None) if case.mode == "sync" else None
    return CaseProbes(case.target, _prefix(case), client_scope=scope, sqlite_conn=conn,
                      admin=admin_client, proxy=proxy_probe(case.target))
