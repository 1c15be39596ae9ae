"""SQLAlchemy ORM: kv through a Session and mapped objects, one Session per
operation as a request handler would use it.

select: Session.get; insert: add + commit (the id comes back from the database);
update: get, set the attribute, commit (load-then-save: two statements); delete: get,
Session.delete of the loaded object, commit; upsert: the dialect's insert()
.on_conflict_do_update / .on_duplicate_key_update executed through the Session;
replace: Session.merge (load by key, then UPDATE or INSERT).
"""

from __future__ import annotations

from collections.abc import Callable
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
        stmt = self.upsert_stmt
        #: what each write does in its session; every write is one session and a commit
        writes: dict[str, Callable[[Any, Any], object]] = {
            "insert": lambda s, p: s.add(model(name=p[0])),
            "update": lambda s, p: setattr(_existing(s, model, p[1], op), "name", p[0]),
            "delete": lambda s, p: s.delete(_existing(s, model, p[0], op)),
            "upsert": lambda s, p: s.execute(stmt, {"k": p[0], "n": p[1]}),
            "replace": lambda s, p: s.merge(model(id=p[0], name=p[1])),
        }
        if op in writes:
            change = writes[op]

            def do_write(p: Any) -> object:
                with make() as s:
                    change(s, p)
                    s.commit()
                return None

            return do_write
        raise CaseFailed(f"unknown kv operation {op!r}")


def _existing(session: Any, model: Any, key: int, op: str) -> Any:
    """The row `op` changes, loaded by the session; a missing one fails the case (the
    table was filled with every key the operation draws)."""
    obj = session.get(model, key)
    if obj is None:
        raise CaseFailed(f"{op}: no row with id {key}")
    return obj
