"""SQLAlchemy ORM: kv through a Session and mapped objects, one Session per
operation as a request handler would use it.

select: Session.get; insert: add + commit (the id comes back from the database);
update: get, set the attribute, commit (load-then-save: two statements); delete: get,
Session.delete of the loaded object, commit; upsert: the dialect's insert()
.on_conflict_do_update / .on_duplicate_key_update executed through the Session;
replace: Session.merge (load by key, then UPDATE or INSERT).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, mapped_column, sessionmaker

from dbstand.errors import CaseFailed
from dbstand.sql.dialects import dialect_for
from dbstand.workloads.kv.adapters.sqlalchemy_base import ID_TYPE, SqlAlchemyKvBase
from dbstand.workloads.kv.adapters.sqlalchemy_core import upsert_statements
from dbstand.workloads.kv.client import Op

FORMS = {
    "select": "Session.get()",
    "insert": "Session.add() + commit()",
    "update": "Session.get(), set attribute, commit() (SELECT + UPDATE)",
    "delete": "Session.get(), Session.delete(), commit() (SELECT + DELETE)",
    "replace": "Session.merge() + commit() (SELECT, then UPDATE or INSERT)",
}
#: by the dialect's native upsert clause (sql/dialects.py)
UPSERT_FORMS = {
    "on_conflict": "Session.execute(insert(KvRow).on_conflict_do_update)",
    "on_duplicate_key": "Session.execute(insert(KvRow).on_duplicate_key_update)",
}


def kv_model(table: str) -> type:
    """A mapped class for the kv table (one registry per client: names vary by prefix)."""

    class Base(DeclarativeBase):
        pass

    class KvRow(Base):
        __tablename__ = table
        id = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
        name = mapped_column(String(64), nullable=False)

    return KvRow



class SqlAlchemyOrmKv(SqlAlchemyKvBase):
    stack = "sqlalchemy-orm"
    layer = "ORM"

    def _setup(self) -> None:
        assert self.engine is not None
        self.model: Any = kv_model(self.table_name)
        self.session = sessionmaker(bind=self.engine, expire_on_commit=False)
        self.upsert_stmt, _ = upsert_statements(dialect_for(self.target.kind),
                                                self.engine.dialect.name, self.model)

    def forms(self) -> dict[str, str]:
        return {**FORMS, "upsert": UPSERT_FORMS[dialect_for(self.target.kind).upsert_clause]}

    def operation(self, op: str) -> Op:
        make: Any = self.session
        model = self.model
        if op == "select":
            def do_select(p: Any) -> object:
                with make() as s:
                    obj = s.get(model, p[0])
                    return (obj.id, obj.name) if obj is not None else None

            return do_select
        if op == "insert":
            def do_insert(p: Any) -> object:
                with make() as s:
                    s.add(model(name=p[0]))
                    s.commit()
                return None

            return do_insert
        if op == "update":
            def do_update(p: Any) -> object:
                with make() as s:
                    obj = s.get(model, p[1])
                    if obj is None:
                        raise CaseFailed(f"update: no row with id {p[1]}")
                    obj.name = p[0]
                    s.commit()
                return None

            return do_update
        if op == "delete":
            def do_delete(p: Any) -> object:
                with make() as s:
                    obj = s.get(model, p[0])
                    if obj is None:
                        raise CaseFailed(f"delete: no row with id {p[0]}")
                    s.delete(obj)
                    s.commit()
                return None

            return do_delete
        if op == "upsert":
            stmt = self.upsert_stmt

            def do_upsert(p: Any) -> object:
                with make() as s:
                    s.execute(stmt, {"k": p[0], "n": p[1]})
                    s.commit()
                return None

            return do_upsert
        if op == "replace":
            def do_replace(p: Any) -> object:
                with make() as s:
                    s.merge(model(id=p[0], name=p[1]))
                    s.commit()
                return None

            return do_replace
        raise CaseFailed(f"unknown kv operation {op!r}")

