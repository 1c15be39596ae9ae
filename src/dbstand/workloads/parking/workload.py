"""Workload `parking`: the ORM study's OLTP service over HTTP (specs/parking.md, seed 000).

One case is (stack, logging, users) on one target. The service is started for the
case; the conformance suite runs first (one exclusive pass: a stack that fails it is
recorded as failed and never measured). Then the engine measures batches: one
iteration is `passes` suite passes per virtual user (revs = passes x users), each
user a thread with its own keep-alive connection; `make_args` re-seeds the places
between batches, untimed (every pass takes 4 of park 1333's places for good).
Around each counted batch: CPU of the app server's process tree, of the database
server's, of this client; statements by kind; log bytes and lines.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from dbstand.engine import Benchmark, CaseMeasurement, EngineConfig, run_benchmark
from dbstand.engine.executor import Executor, SyncExecutor
from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.stats import summarize
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.executors import ThreadExecutor
from dbstand.modes.pinning import placed
from dbstand.network.route import ProxyProbe, path_record, proxy_probe
from dbstand.probes.cpu import TreeCpu
from dbstand.probes.locate import server_pid
from dbstand.probes.statements import StatementCounter, open_counter
from dbstand.profiles import session as profiles
from dbstand.targets.kinds import get_kind
from dbstand.targets.managed import record_for
from dbstand.targets.url import TargetURL
from dbstand.workloads.admin import admin_client
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload
from dbstand.workloads.network_axis import APP_PARAM, app_path
from dbstand.workloads.parking import db
from dbstand.workloads.parking.options import ParkingOptions
from dbstand.workloads.parking.suite import (
    CALLS_PER_PASS,
    PROFILE,
    ParkingClient,
    run_pass,
    totals_mismatch,
)
from dbstand.workloads.parking.suite.checks import SuiteFailure

WORKLOAD = "parking"
OP = "pass"
LOGGING = ("on", "off")
#: the study's table 2 (SQLAlchemy and YB.ORM builds), statements per pass
STUDY_STATEMENTS = {"select": "78-106", "select_for_update": "88-89", "update": "42-45",
                    "insert": "27", "delete": "0"}


#: packages recorded with a case, beside the drivers the service may use




def parking_stacks(kind: str | None = None) -> tuple[str, ...]:
    """The service implementations: every server stack whose manifest implements it
    (only those running on target kind `kind`, when given)."""
    from dbstand.workloads.parking.app import parking_stacks as from_manifests

    return from_manifests(kind)


class ParkingCase(Case):
    def label(self) -> str:
        return (f"parking {self.stack} logging {self.params['logging']} "
                f"users {self.params['users']}")


def build_cases(targets: list[TargetURL], stacks: list[str] | None, logging: list[str],
                users: list[int], options: ParkingOptions) -> list[Case]:
    """targets x stacks x logging x users, or one UserError for a bad axis value.

    `stacks` None: on each target, every parking stack whose manifest lists its kind.
    Named stacks must each run on every target given."""
    options.check()
    known = parking_stacks()
    for stack in stacks or ():
        if stack not in known:
            raise UserError(f"unknown parking stack {stack!r} (known: {', '.join(known)})")
    for value in logging:
        if value not in LOGGING:
            raise UserError(f"--logging takes on and/or off, not {value!r}")
    for n in users:
        if n < 1:
            raise UserError(f"--users must be at least 1 (got {n})")
    for target in targets:
        db.check_target(target)
    per_target: list[tuple[TargetURL, list[str]]] = []
    for target in targets:
        runs_here = parking_stacks(target.kind)
        if stacks is None:
            per_target.append((target, list(runs_here)))
            continue
        for stack in stacks:
            if stack not in runs_here:
                from dbstand.workloads.parking.app import stack_databases

                raise UserError(f"stack {stack!r} does not run on {target.kind} targets "
                                f"(its databases: {', '.join(stack_databases(stack))})")
        per_target.append((target, list(dict.fromkeys(stacks))))
    params = options.params()
    return [ParkingCase(WORKLOAD, stack, target, "sync" if n == 1 else f"threads:{n}", OP,
                        {**params, "logging": log, "users": n})
            for target, names in per_target for stack in names
            for log in dict.fromkeys(logging) for n in dict.fromkeys(users)]


def _check_reachable(target: TargetURL, prefix: str) -> None:
    """Connect once with dbstand's own driver: a clear TargetError before any result."""
    if get_kind(target.kind).embedded:
        return
    admin_client(target, prefix).close()


def uncounted_kinds(counter: StatementCounter) -> dict[str, str]:
    """Statement kinds `counter` cannot count separately: kind -> where they are
    counted instead (MariaDB's Com_select counts SELECT ... FOR UPDATE as a select).
    Such a kind is reported empty, never 0."""
    return dict(counter.uncounted)


def window_ci(samples: list[float]) -> float | None:
    """The 95% CI half-width, % of the mean, of per-window figures (None: < 2 windows
    or a zero mean, where no interval exists)."""
    if len(samples) < 2 or sum(samples) <= 0:
        return None
    return round(summarize(samples).ci95_pct, 2)


def batch_shares(batch_ns: list[dict[str, int]], names: list[str]) -> dict[str, list[float]]:
    """Each function's share (%) of every batch's time, one value per batch."""
    shares: dict[str, list[float]] = {name: [] for name in names}
    for spent in batch_ns:
        total = sum(spent.values())
        if total > 0:
            for name in names:
                shares[name].append(100.0 * spent.get(name, 0) / total)
    return shares


class ServiceProbes:
    """CPU of the app server, the database server and this client, statements by kind
    and log growth, summed over the counted batches (the engine's Probe protocol)."""

    def __init__(self, service: Any, target: TargetURL, prefix: str,
                 app_proxy: ProxyProbe | None = None):
        self.service = service
        #: the --app-rtt proxy between the suite's clients and the service
        self.app_proxy = app_proxy
        self.db_pid, self.db_pid_source = server_pid(target)
        self.app = TreeCpu(service.pid)
        self.db = TreeCpu(self.db_pid) if self.db_pid else None
        # on a --db-rtt path the proxy (dbstand's child) is measured apart from the client
        self.proxy = proxy_probe(target)
        proxy_pid = target.route.proxy_pid if target.route is not None else None
        app_proxy_pid = app_proxy.tree.pid if app_proxy is not None else None
        self.client = TreeCpu(os.getpid(), exclude=[
            p for p in (service.pid, self.db_pid, proxy_pid, app_proxy_pid) if p])
        self.statements: StatementCounter | None = None
        self.statements_source = ("unavailable: SQLite runs inside the app server, where "
                                  "dbstand cannot count its statements")
        self.server_facts: dict[str, Any] = {}
        if not get_kind(target.kind).embedded:
            try:
                self.statements = open_counter(target, prefix,
                                               record_for(target) is not None, admin_client)
                self.statements_source = self.statements.source
                self.server_facts = self.statements.client.server_facts()  # type: ignore[attr-defined]
            except LookupError as exc:
                self.statements_source = f"unavailable: {exc}"
        self.log_bytes = self.log_lines = 0
        self.log_windows: list[int] = []   # each window's log growth, bytes
        self._log0 = (0, 0)
        self.windows = 0
        self._profiling = False

    def _attach_profilers(self) -> None:
        """A profiled case: the app's, the database's and this client's trees from the
        first counted window on (stopped in `result`); the profilers' CPU counts in none."""
        profile = profiles.active()
        if profile is None or self._profiling:
            return
        self._profiling = True
        profile.attach("app", self.service.pid)
        if self.db_pid:
            profile.attach("database", self.db_pid)
        profile.attach("client", os.getpid(), tuple(self.client.exclude))
        self.client.exclude = (*self.client.exclude, *profile.pids())

    def begin(self) -> None:
        self._attach_profilers()
        if self.statements is not None:
            self.statements.begin()
        self._log0 = self.service.log_size()
        for tree in (self.db, self.proxy, self.app_proxy, self.app, self.client):
            if tree is not None:
                tree.begin()

    def end(self) -> None:
        for tree in (self.client, self.app, self.app_proxy, self.proxy, self.db):
            if tree is not None:
                tree.end()
        size, lines = self.service.log_size()
        self.log_bytes += size - self._log0[0]
        self.log_windows.append(size - self._log0[0])
        self.log_lines += lines - self._log0[1]
        if self.statements is not None:
            self.statements.end()
        self.windows += 1

    def result(self, passes: int) -> dict[str, Any]:
        """Per-pass figures for the record (passes: counted passes in all windows).

        A tree whose process could not be read in a window (the app server or the
        database server died, or another process now has its pid) makes the CPU figures
        false: the case fails, naming it, rather than reporting them."""
        profile = profiles.active()
        if profile is not None and self._profiling:
            profile.stop()
        lost = [f"{what}: {tree.lost}" for what, tree in
                (("app server", self.app), ("database server", self.db)) if tree and tree.lost]
        if lost:
            raise CaseFailed("a CPU probe lost its process during the measurement, so its "
                             "CPU per pass would be wrong: " + "; ".join(lost))

        def ms(tree: TreeCpu | None) -> float | None:
            return None if tree is None else round(tree.cpu_s / passes * 1e3, 3)

        out: dict[str, Any] = {
            "app_cpu_ms_per_pass": ms(self.app), "db_cpu_ms_per_pass": ms(self.db),
            "client_cpu_ms_per_pass": ms(self.client),
            "log_bytes_per_pass": round(self.log_bytes / passes, 1),
            "log_lines_per_pass": round(self.log_lines / passes, 2),
            # the 95% CI of each per-pass mean over the counted windows (equal batches)
            "app_cpu_ci95_pct": window_ci(self.app.windows),
            "db_cpu_ci95_pct": window_ci(self.db.windows if self.db else []),
            "log_bytes_ci95_pct": window_ci([float(b) for b in self.log_windows]),
            "statements_per_pass": None, "statements_source": self.statements_source,
            "db_pid_source": self.db_pid_source if self.db is not None else
            ("SQLite runs inside the app server: its CPU is app CPU"
             if self.db_pid is None and "embedded" in self.db_pid_source
             else self.db_pid_source),
        }
        if self.proxy is not None:  # per pass: the network axis's `network` object
            out["proxy"] = self.proxy.result(passes)
        if self.statements is not None:
            per_pass: dict[str, float | None] = dict(self.statements.per_op(passes))
            total: dict[str, int | None] = dict(self.statements.total())
            folded = uncounted_kinds(self.statements)
            for kind in folded:
                per_pass[kind] = total[kind] = None
            out["statements_per_pass"] = per_pass
            out["statements_total"] = total
            if folded:
                out["statements_uncounted"] = folded
            if self.statements.note:
                out["statements_note"] = self.statements.note
        return out

    def close(self) -> None:
        if self.statements is not None:
            self.statements.close()


class PassBenchmark:
    """Iteration = `passes` suite passes per user; re-seed before each, untimed."""

    def __init__(self, service: Any, users: int, passes: int, warmup: int,
                 base_url: str | None = None):
        self.service, self.users, self.passes, self.warmup = service, users, passes, warmup
        # base_url: the service through a --app-rtt proxy, else the service itself
        self.clients = [ParkingClient(base_url or service.base_url) for _ in range(users)]
        self.functions: dict[str, LatencyHistogram] = {f: LatencyHistogram() for f in PROFILE}
        #: each counted batch's time per function (ns, summed over its calls): the
        #: shares of a pass's time get an interval from their spread over batches
        self.batch_ns: list[dict[str, int]] = []
        self.before: dict[str, Any] = {}

    def _op(self, client: ParkingClient, rng: random.Random, _arg: object) -> None:
        try:
            run_pass(client, rng, exclusive=self.users == 1)
        except SuiteFailure as exc:
            raise CaseFailed(f"a measured pass failed the suite: {exc}") from None

    def executor(self) -> Executor:
        ops: list[Callable[[Any], object]] = [partial(self._op, c, random.Random())
                                              for c in self.clients]
        if self.users == 1:
            return SyncExecutor(ops[0], [c.close for c in self.clients])
        return ThreadExecutor(ops, [c.close for c in self.clients])

    def make_args(self, i: int) -> list[None]:
        if i >= 0:  # i < 0: the engine's calibration, which never calls the op
            self.service.reseed()
            self.before = self.service.totals()
            for client in self.clients:
                client.take_latencies()
        return [None] * (self.passes * self.users)

    def after_iteration(self, i: int, args: Any) -> None:
        wrong = totals_mismatch(self.before, self.service.totals(), len(args))
        if wrong:  # a lost update on places or balances, or a stray write
            raise CaseFailed("totals after a batch are not what its passes imply: " + ", ".join(
                f"{k} expected {exp} got {got}" for k, (exp, got) in wrong.items()))
        spent: dict[str, int] = {}
        for client in self.clients:
            taken = client.take_latencies()
            if i >= self.warmup:  # warm-up batches are not counted
                for function, values in taken.items():
                    self.functions.setdefault(function, LatencyHistogram()).record_many(values)
                    spent[function] = spent.get(function, 0) + sum(values)
        if i >= self.warmup:
            self.batch_ns.append(spent)

    def benchmark(self) -> Benchmark:
        return Benchmark("parking pass", lambda _arg: None, self.make_args,
                         self.after_iteration)

    def function_latencies(self) -> dict[str, dict[str, Any]]:
        """Per function: calls, latency summary and histogram, and its share of the
        batches' time (mean over the counted batches, with its 95% CI in % of it)."""
        shares = batch_shares(self.batch_ns, list(self.functions))
        out = {}
        for function, hist in self.functions.items():
            summary = hist.summary_us()
            if summary is not None:
                share = shares.get(function) or []
                out[function] = {"calls": hist.count, **{f"{k}_us": v
                                                         for k, v in summary.items()},
                                 "hdr": hist.encode(),
                                 "share_pct": round(sum(share) / len(share), 3)
                                 if share else None,
                                 "share_ci95_pct": window_ci(share)}
        return out


def conformance(base_url: str) -> dict[str, Any]:
    """One exclusive pass, every scenario run: CaseFailed names the failures."""
    client = ParkingClient(base_url)
    try:
        report = run_pass(client, exclusive=True, keep_going=True)
    except SuiteFailure as exc:  # the call profile of a complete pass
        raise CaseFailed(f"conformance suite failed: {exc}") from None
    finally:
        client.close()
    if not report.ok:
        raise CaseFailed("conformance suite failed, not measured: " +
                         "; ".join(str(f) for f in report.failures))
    return {"passed": True, "calls": sum(report.calls.values()),
            "scenarios": [s.name for s in report.scenarios]}


@contextmanager
def _service(case: Case) -> Iterator[Any]:
    from dbstand.workloads.parking.app import running_service

    with running_service(case.stack, case.target, logging=case.params["logging"] == "on",
                         threads=case.params["users"],
                         prefix=case.params.get("prefix", "dbstand_")) as service:
        yield service


def case_config(config: EngineConfig, case: Case) -> EngineConfig:
    """The study's batches as the least count; more until the 95% CI is within the
    target or the run's cap (`--load seed` sets the cap to the batches: the study's
    fixed count, the CI still deciding the unstable flag)."""
    batches = case.params["batches"]
    return dataclasses.replace(config, revs=case.params["passes"] * case.params["users"],
                               min_iterations=batches,
                               max_iterations=max(batches, config.max_iterations),
                               latency="all")


def parking_metrics(m: CaseMeasurement, case: Case) -> dict[str, Any]:
    mean = m.summary.mean
    return {"passes_per_s": round(m.revs / mean, 3), "calls_per_s": round(
        m.revs * CALLS_PER_PASS / mean, 1), "ms_per_pass": round(mean / m.revs * 1e3, 3)}


def _ensure_built(stack: str) -> None:
    from dbstand.stacks.build import ensure_built
    from dbstand.stacks.manifest import get_manifest

    ensure_built(get_manifest(stack))


class ParkingWorkload(Workload):
    name = WORKLOAD
    description = "ORM overhead on an OLTP HTTP service (the parking suite, 68 calls a pass)"
    operations = (OP,)

    def __init__(self, options: ParkingOptions | None = None):
        self.options = options or ParkingOptions()
        #: (target, prefix) of the tables close() drops (those of cases without --keep)
        self._to_drop: dict[tuple[str, str], tuple[TargetURL, str]] = {}

    def preflight(self, cases: list[Case]) -> None:
        known = parking_stacks()
        seen: set[str] = set()
        for case in cases:
            if case.stack not in known:
                raise UserError(f"unknown parking stack {case.stack!r} "
                                f"(known: {', '.join(known)})")
            ParkingOptions(case.params["passes"], case.params["batches"]).check()
            _ensure_built(case.stack)  # installed and built, before any result
            key = case.target.secret()
            if key not in seen:
                seen.add(key)
                _check_reachable(case.target, case.params.get("prefix", "dbstand_"))

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        cfg = case_config(config, case)
        users, passes = case.params["users"], case.params["passes"]
        prefix = case.params.get("prefix", "dbstand_")
        if not case.params.get("keep"):  # close() drops its tables at the end of the run
            direct = case.target.direct()  # not the --db-rtt proxy, gone by then
            self._to_drop.setdefault((direct.secret(), prefix), (direct, prefix))
        with _service(case) as service, app_path(case, service.base_url) as (base, app):
            verdict = conformance(service.base_url)
            bench = PassBenchmark(service, users, passes, cfg.warmup, base)
            probes = ServiceProbes(service, case.target, case.params.get("prefix", "dbstand_"),
                                   app[1] if app is not None else None)
            parts = {"stack": [service.pid], "database": [probes.db_pid or 0]}
            try:
                with placed(parts) as where:
                    measurement = run_benchmark(bench.benchmark(), cfg, progress,
                                                executor=bench.executor(), probe=probes)
            finally:
                probes.close()
                for client in bench.clients:
                    client.close()
            counted = probes.windows * cfg.revs
            if app is not None:  # per pass, as every figure of parking
                app_network = path_record(APP_PARAM, app[0], app[2], app[1].result(counted))
            metrics: dict[str, Any] = {
                "measurement": measurement, "passes": passes, "batches": case.params["batches"],
                "users": users, "logging": case.params["logging"],
                "calls_per_pass": CALLS_PER_PASS, "conformance": verdict,
                "functions": bench.function_latencies(),
                "study_statements_per_pass": STUDY_STATEMENTS,
                "reseed": "places re-seeded before every batch (untimed)",
                "consistency": "after every batch the service's totals (places, rows, "
                               "balances, receipts, consumes, transfers) equal what its "
                               "passes imply (no lost update)",
                "case_engine": cfg.as_dict(), "baseline_stack": self.options.baseline,
                "placement": where.record(),
                **parking_metrics(measurement, case), **probes.result(counted),
            }
            if app is not None:
                metrics["app_network"] = app_network
            server = {"kind": case.target.kind, **probes.server_facts,
                      "app_server": case.stack}
        return CaseOutcome(metrics=metrics, server=server, packages=_versions(case.stack))

    def package_versions(self, case: Case) -> dict[str, str]:
        return _versions(case.stack)

    def close(self) -> None:
        """At the end of the run, drop the service's tables (only those dbstand's registry
        lists) unless --keep; a database that cannot be reached any more gets a warning,
        not an error that would hide the run's own outcome."""
        from contextlib import closing

        from dbstand.console import err_console
        from dbstand.workloads.parking import schema

        pending, self._to_drop = list(self._to_drop.values()), {}
        for target, prefix in pending:
            try:
                with closing(db.connect(_resolved(target))) as conn:
                    schema.drop_schema(conn, prefix)
            except Exception as exc:
                err_console.print(f"warning: the parking tables ({prefix}t_*) on "
                                  f"{target.redacted()} were not dropped: "
                                  f"{' '.join(str(exc).split())}", highlight=False)


def _resolved(target: TargetURL) -> TargetURL:
    """The target with the password of a `dbstand server up` server filled in."""
    from dbstand.targets.managed import password_for

    if target.password is None and (found := password_for(target)) is not None:
        return target.with_password(found)
    return target


def _versions(stack: str) -> dict[str, str]:
    """Versions of what a stack runs on: the Python packages a stack run by dbstand's
    interpreter imports, or the pins of a stack's own venv (requirements.txt) and its
    interpreter (PyPy)."""
    import importlib.metadata

    from dbstand.stacks.manifest import get_manifest

    manifest = get_manifest(stack)
    out = {}
    for module in manifest.modules:
        try:
            out[module] = importlib.metadata.version(module)
        except importlib.metadata.PackageNotFoundError:
            out[module] = "missing"
    pins = manifest.folder / "requirements.txt"
    if pins.is_file():
        for line in pins.read_text().splitlines():
            name, sep, version = line.split("#", 1)[0].strip().partition("==")
            if sep:
                out[name.strip()] = version.strip()
    if "pypy3" in manifest.commands:
        out["pypy3"] = _interpreter_version("pypy3")
    return out


def _interpreter_version(program: str) -> str:
    """`program --version` in one line (PyPy prints its Python and PyPy versions)."""
    import subprocess

    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    return " ".join((done.stdout + done.stderr).split()) or "unknown"
