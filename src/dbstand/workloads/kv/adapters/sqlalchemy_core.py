"""SQLAlchemy Core: kv through Core statements built once and executed on one
Connection (compiled-statement cache warm after the first call)."""

from __future__ import annotations

import importlib
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.sql import Executable

from dbstand.errors import CaseFailed
from dbstand.sql.dialects import Dialect, dialect_for
from dbstand.workloads.kv.adapters.sqlalchemy_base import SqlAlchemyKvBase, kv_table
from dbstand.workloads.kv.client import Op

#: how each native clause (sql/dialects.py) is built here
UPSERT_FORMS = {"on_conflict": "insert().on_conflict_do_update(set name)",
                "on_duplicate_key": "insert().on_duplicate_key_update(name)"}
REPLACE_FORMS = {"on_conflict": "insert().on_conflict_do_update(set every column)",
                 "or_replace": "insert().prefix_with('OR REPLACE')",
                 "replace_into": "text('REPLACE INTO ...') (Core has no REPLACE construct)"}


def upsert_statements(dialect: Dialect, sa_dialect: str,
                      table: Any) -> tuple[Executable, Executable]:
    """(upsert, replace) in the target's native form (`dialect`'s clauses), with bind
    parameters k and n, built on the insert() of SQLAlchemy's dialect `sa_dialect`.

    `table` is a Table (Core) or a mapped class (ORM-enabled statements)."""
    values: dict[str, Any] = {"id": bindparam("k"), "name": bindparam("n")}
    stmt = importlib.import_module(f"sqlalchemy.dialects.{sa_dialect}").insert(
        table).values(values)
    upsert: Any
    if dialect.upsert_clause == "on_duplicate_key":
        upsert = stmt.on_duplicate_key_update(name=stmt.inserted.name)
    else:
        upsert = stmt.on_conflict_do_update(index_elements=["id"],
                                            set_={"name": stmt.excluded.name})
    replace: Any
    if dialect.replace_clause == "or_replace":
        replace = insert(table).prefix_with("OR REPLACE").values(values)
    elif dialect.replace_clause == "replace_into":
        name = table.__table__.name if hasattr(table, "__table__") else table.name
        replace = text(f"REPLACE INTO {name} (id, name) VALUES (:k, :n)")
    else:
        replace = stmt.on_conflict_do_update(
            index_elements=["id"], set_={"id": stmt.excluded.id, "name": stmt.excluded.name})
    return upsert, replace


class SqlAlchemyCoreKv(SqlAlchemyKvBase):
    stack = "sqlalchemy-core"
    layer = "Core"

    def _setup(self) -> None:
        t = kv_table(self.table_name)
        assert self.engine is not None
        upsert, replace = upsert_statements(dialect_for(self.target.kind),
                                            self.engine.dialect.name, t)
        self.statements: dict[str, Executable] = {
            "select": select(t.c.id, t.c.name).where(t.c.id == bindparam("k")),
            "insert": insert(t),
            "update": update(t).where(t.c.id == bindparam("k")).values(name=bindparam("n")),
            "upsert": upsert,
            "replace": replace,
            "delete": delete(t).where(t.c.id == bindparam("k")),
        }

    def forms(self) -> dict[str, str]:
        dialect = dialect_for(self.target.kind)
        return {"select": "select().where(id == :k)", "insert": "insert()",
                "update": "update().where(id == :k)", "delete": "delete().where(id == :k)",
                "upsert": UPSERT_FORMS[dialect.upsert_clause],
                "replace": REPLACE_FORMS[dialect.replace_clause]}

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
