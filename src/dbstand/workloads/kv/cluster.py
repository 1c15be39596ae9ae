"""`run kv --cluster`: the kv workload's own executor, one share of the mode's clients
per Dask worker (distributed/executor.py runs the shares and merges their figures).

`KvCluster` is what `KvWorkload` holds while `KvOptions.cluster` is set: the session
opened at preflight, the ClusterExecutor of each case, each worker's figures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbstand.errors import UserError
from dbstand.modes.spec import ModeSpec, parse_mode

if TYPE_CHECKING:
    from dbstand.distributed.executor import ClusterExecutor
    from dbstand.distributed.session import ClusterSession
    from dbstand.engine.executor import Executor
    from dbstand.workloads.base import Case


@dataclass(frozen=True)
class KvShareRecipe:
    """What a worker needs to open its share of the clients (pickled to it; the target
    keeps its password, so use TLS between hosts you do not trust)."""

    spec: Any          # the case's StackSpec (its protocol and driver variant)
    target: str
    prefix: str
    op: str
    mode: ModeSpec     # this worker's share: threads:k, asyncio:k, or sync
    loop_name: str
    gc_off: bool

    def share(self, mode: ModeSpec) -> KvShareRecipe:
        return replace(self, mode=mode)

    def destination(self) -> tuple[str, int] | None:
        """The address the connections go to (the proxy's on a routed path); None for
        SQLite (no network)."""
        from dbstand.drivers.endpoint import endpoint
        from dbstand.targets.url import parse_target_url

        target = parse_target_url(self.target)
        if not target.host:
            return None
        where = endpoint(target)
        return (where.host, where.port) if where.port else None

    def build(self) -> Executor:
        """The kv workload's own executor for this share (as on one machine)."""
        from dbstand.engine.executor import SyncExecutor
        from dbstand.targets.url import parse_target_url
        from dbstand.workloads.kv.executors import build_executor

        target = parse_target_url(self.target)
        if self.mode.kind == "sync":
            client = self.spec.load("kv")(target, self.prefix)
            client.connect()
            return SyncExecutor(client.operation(self.op), [client.close])
        return build_executor(self.spec, target, self.prefix, self.op, self.mode, None,
                              self.loop_name, self.gc_off)


class KvCluster:
    """The cluster of a kv run: opened at preflight, closed with the workload."""

    def __init__(self, spec_text: str):
        from dbstand.distributed.spec import parse_cluster

        self.spec = parse_cluster(spec_text)
        self.session: ClusterSession | None = None

    def check(self, cases: list[Case], specs: list[Any]) -> None:
        """What a cluster cannot run, before it is started (`specs`: each case's
        StackSpec, on its protocol and driver)."""
        from dbstand.distributed.executor import cluster_shares
        from dbstand.workloads.kv.adapters.external import ExternalKv

        for case, spec in zip(cases, specs, strict=True):
            if case.target.is_memory:
                raise UserError("an in-memory SQLite database lives in one process: give "
                                "--cluster a file (sqlite:///path.db) or a database server")
            cluster_shares(parse_mode(case.mode), self.spec.workers or 1)
            client_cls = spec.load("kv")
            if isinstance(client_cls, type) and issubclass(client_cls, ExternalKv):
                raise UserError(f"stack {case.stack!r} runs another program for its "
                                "operations: --cluster does not apply to it")

    def open(self, cases: list[Case]) -> None:
        from dbstand.console import err_console
        from dbstand.distributed.executor import cluster_shares
        from dbstand.distributed.session import open_cluster

        self.session = open_cluster(self.spec)
        try:
            for note in self.session.notes:
                err_console.print(f"note: {note}", highlight=False)
            workers = len(self.session.workers)
            for case in cases:
                cluster_shares(parse_mode(case.mode), workers)
                case.params["cluster"] = self.spec.label
        except BaseException:
            self.close()
            raise

    def executor(self, recipe: KvShareRecipe) -> ClusterExecutor:
        """The case's executor: `recipe`'s clients dealt out over the workers alive now."""
        from dbstand.distributed.executor import ClusterExecutor, cluster_shares

        assert self.session is not None, "preflight opens the cluster"
        self.session.refresh()
        return ClusterExecutor(self.session, recipe, recipe.mode,
                               cluster_shares(recipe.mode, len(self.session.workers)))

    def report(self, executor: Executor, label: str, measurement: Any) -> dict[str, Any]:
        """Each worker's figures over the measured iterations, printed and returned for
        the case's record."""
        from dbstand.console import console
        from dbstand.distributed.executor import ClusterExecutor, print_workers

        assert isinstance(executor, ClusterExecutor)
        # the warm-up the engine actually ran (a steady warm-up may run more than asked)
        report = executor.report(measurement.warmup_iterations)
        print_workers(label, report, measurement, console)
        return report

    def close(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            session.close()
