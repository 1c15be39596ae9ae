"""Build the executor of a kv case from its mode.

sync: the case's own connection. threads:N: N more connections of the same sync
stack. asyncio:N: N connections of an asyncio stack in one event loop (one shared
connection with `+shared`, for connectors that multiplex). processes:P[xasyncio:N]:
P worker processes, each opening its own connections from a picklable recipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbstand.engine.executor import Executor, SyncExecutor
from dbstand.errors import UserError
from dbstand.modes.executors import AsyncioExecutor, ThreadExecutor, new_event_loop
from dbstand.modes.processes import ProcessExecutor
from dbstand.modes.spec import ModeSpec
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.catalog import StackSpec, get_stack
from dbstand.workloads.kv.client import AsyncKvClient, KvClient


def check_mode(spec: StackSpec, mode: ModeSpec, revs: int) -> None:
    """Refuse combinations that cannot run, before anything is written."""
    if mode.is_async and not spec.is_async:
        raise UserError(f"mode {mode.name} needs an asyncio stack; {spec.name!r} is "
                        "synchronous (use sync, threads:N or processes:P)")
    if not mode.is_async and spec.is_async:
        raise UserError(f"stack {spec.name!r} is asyncio-only: use asyncio:N or "
                        "processes:PxAsyncio:N")
    if mode.shared and not getattr(spec.load("kv"), "multiplexes", False):
        raise UserError(f"stack {spec.name!r} cannot share one connection between "
                        f"coroutines: drop +shared from {mode.name}")
    if revs < mode.concurrency:
        raise UserError(f"--revs ({revs}) must be at least the concurrency of "
                        f"{mode.name} ({mode.concurrency})")


def _sync_clients(spec: StackSpec, target: TargetURL, prefix: str, n: int) -> list[KvClient]:
    clients: list[KvClient] = []
    try:
        for _ in range(n):
            client = spec.load("kv")(target, prefix)
            client.connect()
            clients.append(client)
    except BaseException:
        for c in clients:
            c.close()
        raise
    return clients


def _asyncio_executor(spec: StackSpec, target: TargetURL, prefix: str, op: str,
                      coroutines: int, shared: bool, loop_name: str) -> AsyncioExecutor:
    loop = new_event_loop(loop_name)
    cls = spec.load("kv")
    clients: list[AsyncKvClient] = []

    async def open_all() -> None:
        for _ in range(1 if shared else coroutines):
            client = cls(target, prefix)
            await client.connect()
            clients.append(client)

    try:
        loop.run_until_complete(open_all())
    except BaseException:
        for c in clients:
            loop.run_until_complete(c.close())
        loop.close()
        raise
    ops = [clients[0 if shared else i].operation(op) for i in range(coroutines)]
    return AsyncioExecutor(loop, ops, [c.close for c in clients])


@dataclass(frozen=True)
class KvWorkerFactory:
    """What a worker process needs to open its own connections (pickled to it)."""

    stack: str
    target: str          # with password: travels through a pipe, never argv
    prefix: str
    op: str
    coroutines: int
    shared: bool
    loop_name: str

    def build(self) -> Executor:
        spec = get_stack(self.stack)
        target = parse_target_url(self.target)
        if self.coroutines:
            return _asyncio_executor(spec, target, self.prefix, self.op, self.coroutines,
                                     self.shared, self.loop_name)
        (client,) = _sync_clients(spec, target, self.prefix, 1)
        return SyncExecutor(client.operation(self.op), [client.close])


def build_executor(spec: StackSpec, target: TargetURL, prefix: str, op: str, mode: ModeSpec,
                   admin: KvClient | None, loop_name: str = "asyncio", gc_off: bool = True
                   ) -> Executor:
    """The executor for `mode`; `admin` is the case's own sync connection (sync mode)."""
    if mode.kind == "sync":
        assert admin is not None
        return SyncExecutor(admin.operation(op))
    if mode.kind == "threads":
        clients = _sync_clients(spec, target, prefix, mode.workers)
        return ThreadExecutor([c.operation(op) for c in clients], [c.close for c in clients])
    if mode.kind == "asyncio":
        return _asyncio_executor(spec, target, prefix, op, mode.workers, mode.shared, loop_name)
    factory = KvWorkerFactory(spec.name, target.secret(), prefix, op, mode.coroutines,
                              mode.shared, loop_name)
    return ProcessExecutor(mode.workers, factory, gc_off=gc_off)


def mode_record(mode: ModeSpec, executor: Executor) -> dict[str, Any]:
    return {"kind": mode.kind, "concurrency": mode.concurrency,
            "connections": mode.connections, "shared_connection": mode.shared,
            "timed": executor.timed}
