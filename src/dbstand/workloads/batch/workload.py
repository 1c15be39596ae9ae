"""Workload `batch`: bulk INSERT / UPDATE / DELETE through each driver's batch APIs
(specs/batch.md, seed 002).

One case is one (stack, api, op, rows). It is a Benchmark of one operation per
iteration (revs=1): `make_args` recreates the table (and pre-fills it for update
and delete) untimed, the operation is the API's batch call(s) plus COMMIT, and
`after_iteration` verifies the table. Cases below `large_rows` repeat under the
stop rule; larger ones run a fixed `large_repeats` times and show their spread.
Limit rows (`limit:*` apis) run the same way through the first stack of their
target kind, which only prepares and verifies the table for them.

`--key-predicate cast` adds cases that find rows through a cast the key's index
cannot serve (batch/sql.py): the study's pitfall, reproduced on purpose and labelled.
Fixed repetitions get the same instability flag as the stop rule's cases when
their 95% interval is wider than the target.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dbstand.engine import Benchmark, CaseMeasurement, EngineConfig, run_benchmark
from dbstand.errors import UserError
from dbstand.network.route import proxy_probe
from dbstand.probes.case import CaseProbes
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import (
    Case,
    CaseOutcome,
    Progress,
    Workload,
    check_choice,
    check_known,
    prove_access,
)
from dbstand.workloads.batch.api import OPS, BatchApi, BatchClient, BatchData
from dbstand.workloads.batch.options import (
    DEFAULT_LARGE_REPEATS,
    DEFAULT_LARGE_ROWS,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    BatchOptions,
)
from dbstand.workloads.batch.sql import DEFAULT_KEY_PREDICATE, KEY_PREDICATES
from dbstand.workloads.catalog import StackSpec, get_stack

DEFAULT_ROWS = (10_000, 50_000, 100_000)
#: a fixed repetition has no stop rule, so no time budget either
FIXED_TIME_BUDGET_S = 1e9
WORKLOAD = "batch"


class BatchCase(Case):
    """A batch case: its label names the api and row count too."""

    def label(self) -> str:
        return (f"batch {self.stack} {self.params['api']} {self.op} "
                f"{self.params['rows']:,} rows")


def client_class(spec: StackSpec) -> type[BatchClient]:
    """The stack's batch adapter, without importing its driver (see batch_base)."""
    if WORKLOAD not in spec.adapters:
        raise UserError(f"stack {spec.name!r} does not implement the batch workload "
                        f"(it does: {', '.join(spec.adapters) or 'nothing yet'})")
    import importlib

    module, _, attr = spec.adapters[WORKLOAD].partition(":")
    return getattr(importlib.import_module(module), attr)


def _check_stack(spec: StackSpec, target: TargetURL) -> type[BatchClient]:
    cls = client_class(spec)
    if not spec.talks_to(target):
        raise UserError(f"stack {spec.name!r} cannot talk to {target.kind} targets "
                        f"(it supports: {', '.join(spec.targets)})")
    return cls


def _api_names(cls: type[BatchClient]) -> str:
    return ", ".join(a.name for a in cls.apis) or "none"


def check_options(options: BatchOptions, rows: list[int]) -> None:
    if not rows:
        raise UserError("--rows: give at least one row count")
    for n in rows:
        if n < 1:
            raise UserError(f"--rows must be at least 1 (got {n})")
    if not 1 <= options.page_size <= MAX_PAGE_SIZE:
        raise UserError(f"--page-size must be between 1 and {MAX_PAGE_SIZE:,}")
    if options.large_repeats < 3:
        raise UserError("--large-repeats must be at least 3 (large cases show their spread)")
    if options.large_rows < 1:
        raise UserError("--large-rows must be at least 1")


def _chosen_apis(target: TargetURL, stacks: list[str], apis: list[str],
                 ops: list[str]) -> dict[str, list[BatchApi]]:
    """Each stack's APIs to run; a name no stack has, or a stack left with none, is an
    error."""
    chosen: dict[str, list[BatchApi]] = {}
    for stack in stacks:
        cls = _check_stack(get_stack(stack), target)
        own = [a for a in cls.apis if not apis or a.name in apis]
        if not own:
            raise UserError(f"stack {stack!r} has no batch api "
                            f"{', '.join(repr(a) for a in apis)} (it has: {_api_names(cls)})")
        if not any(op in a.ops for a in own for op in ops):
            raise UserError(f"stack {stack!r}: api {', '.join(a.name for a in own)} "
                            f"does not do {', '.join(ops)}")
        chosen[stack] = own
    known = {a.name for own in chosen.values() for a in own}
    for name in apis:
        if name not in known:
            have = "; ".join(f"{s}: {_api_names(client_class(get_stack(s)))}" for s in stacks)
            raise UserError(f"no chosen stack has the batch api {name!r} ({have})")
    return chosen


def build_cases(targets: list[TargetURL], stacks: list[str], apis: list[str], ops: list[str],
                rows: list[int], options: BatchOptions, limits: bool = True,
                key_predicates: list[str] | None = None,
                notes: list[str] | None = None) -> list[Case]:
    """The run's matrix, or one clear UserError for anything the user got wrong.

    An api name applies to every chosen stack that has it. Pairs an api cannot do
    (an insert-only ORM call asked to delete) are left out. Per (op, rows) the limit
    rows come first, run through the first stack (it only prepares and verifies).
    Each key predicate other than the default adds its own update and delete cases
    (inserts find no rows by key); pairs that cannot use it are left out, with a
    line in `notes`.
    """
    ops, stacks = list(dict.fromkeys(ops)), list(dict.fromkeys(stacks))
    rows = list(dict.fromkeys(rows))
    predicates = list(dict.fromkeys(key_predicates or [DEFAULT_KEY_PREDICATE]))
    check_known(ops, OPS, "batch operation")
    check_choice(predicates, KEY_PREDICATES, "--key-predicate")
    check_options(options, rows)
    cases: list[Case] = []
    for target in targets:
        chosen = _chosen_apis(target, stacks, apis, ops)
        first = stacks[0]
        limit_rows = [a for a in client_class(get_stack(first)).api_catalogue(target.kind)
                      if a.is_limit] if limits else []
        for op in ops:
            for n in rows:
                params = {**options.params(), "rows": n}
                runs = [(first, api, True) for api in limit_rows] + \
                    [(stack, api, False) for stack, own in chosen.items() for api in own]
                for predicate in predicates:
                    extra = {} if predicate == DEFAULT_KEY_PREDICATE else \
                        {"key_predicate": predicate}
                    for stack, api, limit in runs:
                        if op not in api.ops or (extra and (limit or op == "insert")):
                            continue
                        problem = client_class(get_stack(stack)).key_predicate_problem(
                            api.name, op, predicate)
                        if problem:
                            if notes is not None:
                                notes.append(f"{stack} {api.name} {op} skipped with "
                                             f"--key-predicate {predicate}: {problem}")
                            continue
                        cases.append(BatchCase(WORKLOAD, stack, target, "sync", op, {
                            **params, "api": api.name, "limit": limit, **extra}))
    return cases


def open_client(case: Case) -> BatchClient:
    # for_target: a stack sitting on a driver (SQLAlchemy) gets the target's default one
    cls = get_stack(case.stack).for_target(case.target.kind).load(WORKLOAD)
    client: BatchClient = cls(case.target, case.params.get("prefix", "dbstand_"),
                              case.stack, case.params.get("page_size", DEFAULT_PAGE_SIZE))
    client.use_key_predicate(case.params.get("key_predicate", DEFAULT_KEY_PREDICATE))
    client.connect()
    return client


def case_config(config: EngineConfig, case: Case) -> tuple[EngineConfig, bool]:
    """The engine settings of one case, and whether its repetition is fixed."""
    base = dataclasses.replace(config, revs=1, latency="off")
    if case.params["rows"] >= case.params.get("large_rows", DEFAULT_LARGE_ROWS):
        repeats = case.params.get("large_repeats", DEFAULT_LARGE_REPEATS)
        return dataclasses.replace(base, min_iterations=repeats, max_iterations=repeats,
                                   max_time_s=FIXED_TIME_BUDGET_S), True
    return base, False


class BatchBenchmark:
    """The engine's Benchmark for one case: prepare untimed, time the batch, verify."""

    def __init__(self, client: BatchClient, case: Case):
        self.client = client
        self.api: str = case.params["api"]
        self.op = case.op
        self.analyze = bool(case.params.get("analyze", True))
        self.data = BatchData.build(case.op, case.params["rows"])
        self.input = client.prepare_input(self.api, self.data)

    def make_args(self, i: int) -> list[Any]:
        if i >= 0:  # i < 0: the engine's calibration, which never runs the operation
            self.client.reset_table(self.op, self.data.rows, self.analyze)
        return [self.input]

    def after_iteration(self, i: int, args: Any) -> None:
        self.client.verify(self.data)

    def benchmark(self) -> Benchmark:
        return Benchmark(f"{self.api} {self.op}", self.client.operation(self.api, self.op),
                         self.make_args, self.after_iteration)


def api_is_limit(api: str) -> bool:
    return api.startswith("limit:")


def batch_metrics(m: CaseMeasurement, rows: int) -> dict[str, Any]:
    """Seconds per batch and rows/s: what the batch report shows."""
    s = m.summary
    return {"seconds": s.mean, "seconds_min": s.min, "seconds_max": s.max,
            "seconds_stdev": s.stdev, "rows_per_s": round(rows / s.mean, 1),
            "rows_per_s_min": round(rows / s.max, 1), "rows_per_s_max": round(rows / s.min, 1)}


class BatchWorkload(Workload):
    name = WORKLOAD
    description = ("bulk insert/update/delete of N rows through each driver's batch APIs, "
                   "with the native limit and a scaling verdict")
    operations = OPS

    def __init__(self, options: BatchOptions | None = None):
        self.options = options or BatchOptions()

    def preflight(self, cases: list[Case]) -> None:
        seen: set[tuple[str, str]] = set()
        for case in cases:
            spec = get_stack(case.stack)
            cls = _check_stack(spec, case.target)
            if case.op not in OPS:
                raise UserError(f"unknown batch operation {case.op!r} "
                                f"(known: {', '.join(OPS)})")
            api = cls.find_api(case.params.get("api", ""), case.target.kind)
            if api is None:
                raise UserError(f"stack {case.stack!r} has no batch api "
                                f"{case.params.get('api')!r} (it has: "
                                f"{_api_names(cls)})")
            if case.op not in api.ops:
                raise UserError(f"batch api {api.name!r} of {case.stack!r} does not do "
                                f"{case.op} (it does: {', '.join(api.ops)})")
            predicate = case.params.get("key_predicate", DEFAULT_KEY_PREDICATE)
            problem = cls.key_predicate_problem(api.name, case.op, predicate)
            if problem:
                raise UserError(f"{case.stack} {api.name} {case.op}: {problem}")
            check_options(BatchOptions.of_case(case.params), [case.params["rows"]])
            spec.require()
            key = (case.stack, case.target.secret())
            if key not in seen:
                seen.add(key)
                prove_access(open_client(case))

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        spec = get_stack(case.stack)
        client = open_client(case)
        keep = bool(case.params.get("keep"))
        rows = case.params["rows"]
        cfg, fixed = case_config(config, case)
        try:
            server = client.server_facts()
            client.check_ownership()
            bench = BatchBenchmark(client, case)
            proxy = proxy_probe(case.target)
            # CPU of the client, the database (and a routed target's proxy) per batch:
            # the cost breakdown, and the trees --profile samples
            probes = CaseProbes(case.target, str(case.params.get("prefix", "dbstand_")),
                                client_scope=getattr(client, "client_cpu_scope", "process"),
                                proxy=proxy)
            try:
                measurement = run_benchmark(bench.benchmark(), cfg, progress, probe=probes)
                probed = probes.result(cfg.revs, measurement.warmup_iterations)
            except BaseException:
                client.cleanup_after_failure(keep)
                raise
            finally:
                probes.close()
            if not keep:
                client.drop_table()
        finally:
            client.close()
        if fixed:  # no stop rule decided the count: flagged as the rule would flag it
            measurement.unstable = measurement.summary.ci95_pct > cfg.target_ci_pct
            measurement.stop_reason = "fixed-repetitions"
        api = client.find_api(case.params["api"], case.target.kind)
        metrics: dict[str, Any] = {
            "measurement": measurement,
            "api": case.params["api"],
            "rows": rows,
            "limit": bool(case.params.get("limit")),
            "api_form": api.description if api else "",
            "repetition": f"fixed:{cfg.max_iterations}" if fixed else "stop-rule",
            "verified": ("row count, deleted sample gone" if case.op == "delete" else
                         f"row count, values of {len(bench.data.sample())} sampled keys"),
            "case_engine": cfg.as_dict(),
            "probes": probed,
            **batch_metrics(measurement, rows),
        }
        predicate = case.params.get("key_predicate", DEFAULT_KEY_PREDICATE)
        if predicate != DEFAULT_KEY_PREDICATE and case.op != "insert" and not api_is_limit(
                case.params["api"]):
            metrics["key_predicate"] = predicate
            metrics["key_form"] = client.sql.key_form
        if self.options.baseline:
            metrics["baseline"] = self.options.baseline
        if proxy is not None:
            metrics["proxy"] = proxy.result(proxy.windows * measurement.revs)
        return CaseOutcome(metrics=metrics, server=server, packages=spec.versions())
