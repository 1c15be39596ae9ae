"""The `db` and `cache` tests' table: `<prefix>world`, TechEmpower's World (id,
randomnumber), 10,000 rows, created through dbstand's ownership registry, loaded by
the kind's bulk path (sql/bulk.py) and reused while its row count matches."""

from __future__ import annotations

import random
from contextlib import closing
from typing import Any

from dbstand.sql import bulk
from dbstand.targets.url import TargetURL
from dbstand.workloads.admin import admin_client

WORKLOAD = "webtech"
ROWS = 10_000
SUFFIX = "world"


def table_name(prefix: str) -> str:
    return f"{prefix}{SUFFIX}"


def ensure_world(target: TargetURL, prefix: str, seed: int = 1) -> None:
    """Create and fill the table unless a dbstand-owned one with ROWS rows exists."""
    table = table_name(prefix)
    with closing(admin_client(target, prefix)) as client:
        cur, ownership = client.cur, client.ownership
        ownership.check(table)
        if ownership.owns(table):
            cur.execute(f"SELECT COUNT(*) FROM {table}")
            if cur.fetchone()[0] == ROWS:
                return
        ownership.create(table, f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, "
                                "randomnumber INTEGER NOT NULL)", WORKLOAD)
        rnd = random.Random(seed)
        rows = [(i, rnd.randint(1, ROWS)) for i in range(1, ROWS + 1)]
        if bulk.load(target, table, ("id", "randomnumber"), rows,
                     connection=client.conn) is None:
            insert = client.sql(f"INSERT INTO {table} (id, randomnumber) VALUES (?, ?)")
            cur.execute("BEGIN")
            cur.executemany(insert, rows)
            cur.execute("COMMIT")
            bulk.analyze(cur, target.kind, table)


def world_rows(target: TargetURL, prefix: str, ids: list[int]) -> dict[int, int]:
    """randomnumber by id, read directly, to check what a page shows."""
    table = table_name(prefix)
    with closing(admin_client(target, prefix)) as client:
        out: dict[int, int] = {}
        for row_id in ids:
            client.cur.execute(client.sql(f"SELECT randomnumber FROM {table} WHERE id = ?"),
                               (row_id,))
            row: Any = client.cur.fetchone()
            if row is not None:
                out[row_id] = int(row[0])
        return out


def drop_world(target: TargetURL, prefix: str) -> None:
    with closing(admin_client(target, prefix)) as client:
        if client.ownership.owns(table_name(prefix)):
            client.ownership.drop(table_name(prefix))
