"""SQLAlchemy Core: kv through Core statements built once and executed on one
Connection (compiled-statement cache warm after the first call)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.sql import Executable

from dbstand.errors import CaseFailed
from dbstand.workloads.kv.adapters.sqlalchemy_base import SqlAlchemyKvBase, kv_table
from dbstand.workloads.kv.client import Op

FORMS = {
    "postgresql": {"upsert": "insert().on_conflict_do_update(set name)",
                   "replace": "insert().on_conflict_do_update(set every column)"},
    "sqlite": {"upsert": "insert().on_conflict_do_update(set name)",
               "replace": "insert().prefix_with('OR REPLACE')"},
    "mysql": {"upsert": "insert().on_duplicate_key_update(name)",
              "replace": "text('REPLACE INTO ...') (Core has no REPLACE construct)"},
}


def upsert_statements(kind: str, table: Any) -> tuple[Executable, Executable]:
    """(upsert, replace) in the target's native form, with bind parameters k and n.

    `table` is a Table (Core) or a mapped class (ORM-enabled statements)."""
    values: dict[str, Any] = {"id": bindparam("k"), "name": bindparam("n")}
    if kind in ("postgresql", "sqlite"):
        dialect_insert = postgresql.insert if kind == "postgresql" else sqlite.insert
        stmt = dialect_insert(table).values(values)
        upsert: Any = stmt.on_conflict_do_update(index_elements=["id"],
                                            set_={"name": stmt.excluded.name})
        if kind == "sqlite":
            return upsert, insert(table).prefix_with("OR REPLACE").values(values)
        replace = stmt.on_conflict_do_update(
            index_elements=["id"], set_={"id": stmt.excluded.id, "name": stmt.excluded.name})
        return upsert, replace
    if kind == "mysql":
        my_stmt = mysql.insert(table).values(values)
        upsert = my_stmt.on_duplicate_key_update(name=my_stmt.inserted.name)
        name = table.__table__.name if hasattr(table, "__table__") else table.name
        return upsert, text(f"REPLACE INTO {name} (id, name) VALUES (:k, :n)")
    raise CaseFailed(f"no upsert form for {kind}")


class SqlAlchemyCoreKv(SqlAlchemyKvBase):
    stack = "sqlalchemy-core"
    layer = "Core"

    def _setup(self) -> None:
        t = kv_table(self.table_name)
        upsert, replace = upsert_statements(str(self.target.dialect), t)
        self.statements: dict[str, Executable] = {
            "select": select(t.c.id, t.c.name).where(t.c.id == bindparam("k")),
            "insert": insert(t),
            "update": update(t).where(t.c.id == bindparam("k")).values(name=bindparam("n")),
            "upsert": upsert,
            "replace": replace,
            "delete": delete(t).where(t.c.id == bindparam("k")),
        }

    def forms(self) -> dict[str, str]:
        return {"select": "select().where(id == :k)", "insert": "insert()",
                "update": "update().where(id == :k)", "delete": "delete().where(id == :k)",
                **FORMS.get(self.target.kind, {})}

    def operation(self, op: str) -> Op:
        if op not in self.statements:
            raise CaseFailed(f"unknown kv operation {op!r}")
        assert self.sa is not None
        stmt, execute = self.statements[op], self.sa.execute
        if op == "select":
            return lambda p: execute(stmt, {"k": p[0]}).first()
        if op == "insert":
            return lambda p: execute(stmt, {"name": p[0]})
        if op == "update":
            return lambda p: execute(stmt, {"n": p[0], "k": p[1]})
        if op == "delete":
            return lambda p: execute(stmt, {"k": p[0]})
        return lambda p: execute(stmt, {"k": p[0], "n": p[1]})  # upsert, replace
