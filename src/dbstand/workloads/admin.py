"""The untimed admin connection to a target: the first installed of its kind's admin
stacks (targets/<kind>/kind.py), through that stack's kv client, so counters and
checks reuse the measured drivers' own connect code."""

from __future__ import annotations

import importlib
from typing import Any

from dbstand.errors import MissingDependencyError
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL
from dbstand.workloads.catalog import get_stack


def admin_client(target: TargetURL, prefix: str) -> Any:
    """A connected kv client of the first installed admin stack (caller closes it)."""
    kind = get_kind(target.kind)
    for name in kind.admin_stacks:
        spec = get_stack(name)
        if spec.installed:
            client = spec.load("kv")(target, prefix)
            client.connect()
            return client
    raise MissingDependencyError(f"no driver installed to reach {target.redacted()} "
                                 f"(any of {', '.join(kind.admin_stacks) or 'none'})")


#: the drivers/ module of each admin stack that gives a plain DB-API connection
_DRIVER_MODULES = {"psycopg": "psycopg", "psycopg2": "psycopg2", "pg8000": "pg8000",
                   "pymysql": "pymysql", "mysqlclient": "mysqlclient",
                   "mysql-connector-python": "mysql_connector"}


def lock_connection(target: TargetURL, prefix: str) -> Any:
    """The connection a run lock is held on (targets/<kind>/lock.py): a DB-API
    connection (autocommit) through the first installed admin driver that has one,
    else the admin kv client (Tarantool's connector)."""
    from dbstand.drivers import open_with

    kind = get_kind(target.kind)
    if not any(stack in _DRIVER_MODULES for stack in kind.admin_stacks):
        return admin_client(target, prefix)
    for stack in kind.admin_stacks:
        module = _DRIVER_MODULES.get(stack)
        if module is None or not get_stack(stack).installed:
            continue
        driver = importlib.import_module(f"dbstand.drivers.{module}")
        connect: Any = driver.connect
        return open_with(lambda connect=connect: connect(target), target)  # type: ignore[misc]
    raise MissingDependencyError(f"no driver installed to reach {target.redacted()} "
                                 f"(any of {', '.join(kind.admin_stacks)})")
