"""SQLAlchemy's batch paths: Core executemany, ORM bulk INSERT / UPDATE by primary key.

SQLAlchemy sits on a driver stack (`sqlalchemy-core+psycopg2`, or the default driver
for the target). That driver's own batch client opens the connection and does the
untimed work (reset, verify, drop); the engine wraps that very connection, in the
driver's default transactional mode, so SQLAlchemy and the bare driver differ by
SQLAlchemy alone. The timed part is the statement(s) plus COMMIT.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from dbstand.errors import CaseFailed
from dbstand.workloads.batch.api import BatchApi, BatchClient, BatchData, Op, pages

ALL = ("insert", "update", "delete")


class _SqlAlchemyBatch(BatchClient):
    """Engine over the driver client's connection; subclasses add the APIs."""

    #: set on `+driver` variants by the registry; otherwise the target's default driver
    driver: ClassVar[str | None] = None
    layer: ClassVar[str] = "Core"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        from dbstand.workloads.catalog import get_stack

        driver = self.driver or get_stack(self.stack).for_target(self.target.kind).driver
        if driver is None:
            raise CaseFailed(f"{self.stack}: no SQLAlchemy driver for {self.target.kind}")
        self.driver_name: str = driver
        self.helper: BatchClient = get_stack(driver).load("batch")(
            self.target, self.prefix, driver, self.page_size)
        self.paramstyle = self.helper.paramstyle  # type: ignore[misc]
        self.engine: Any = None
        self.sa: Any = None

    def connect(self) -> None:
        import sqlalchemy
        from sqlalchemy.pool import StaticPool

        from dbstand.workloads.kv.adapters.sqlalchemy_base import DIALECTS

        self.helper.connect()
        raw = getattr(self.helper, "conn", None)
        if raw is None:
            raise CaseFailed(f"{self.stack}: {self.driver_name} is not a DB-API driver")
        self.engine = sqlalchemy.create_engine(
            f"{DIALECTS[self.driver_name]}://", creator=lambda: raw, poolclass=StaticPool,
            pool_reset_on_return=None)
        self.sa = self.engine.connect()  # dialect initialisation: untimed, here
        self.sa.commit()
        self.table_obj = self._table(sqlalchemy)
        self._setup()

    def _table(self, sqlalchemy: Any) -> Any:
        from sqlalchemy import Column, MetaData, Numeric, String, Table

        return Table(self.table, MetaData(), Column("f_key", String(32), primary_key=True),
                     Column("f_value", Numeric(30, 0)))

    def _setup(self) -> None:
        """Statements and mappings, built once."""

    @classmethod
    def key_predicate_problem(cls, api: str, op: str, predicate: str) -> str | None:
        if predicate != "index" and op != "insert" and not api.startswith("limit:"):
            return "SQLAlchemy builds its own statements: only the index key predicate"
        return None

    def close(self) -> None:
        try:
            if self.sa is not None:
                self.sa.close()
            if self.engine is not None:
                self.engine.dispose(close=False)  # the driver client closes it
        finally:
            self.sa = self.engine = None
            self.helper.close()
            super().close()

    def server_facts(self) -> dict[str, Any]:
        import sqlalchemy

        facts = self.helper.server_facts()
        facts["client"] = (f"SQLAlchemy {sqlalchemy.__version__} {self.layer} over "
                           f"{self.driver_name}")
        return facts

    def cursor(self) -> Any:
        return self.helper.cursor()

    def commit(self) -> None:
        self.helper.commit()

    def rollback(self) -> None:
        if self.sa is not None and self.sa.in_transaction():
            self.sa.rollback()
        self.helper.rollback()

    def prepare_input(self, api: str, data: BatchData) -> Any:
        """INSERT rows are column-keyed dicts in both layers; the keyed ops differ."""
        if api.startswith("limit:"):
            return super().prepare_input(api, data)
        if data.op == "insert":
            return [{"f_key": k, "f_value": v} for k, v in data.row_params]
        return self._keyed_input(data)

    @abstractmethod
    def _keyed_input(self, data: BatchData) -> Any:
        """UPDATE/DELETE input: Core and ORM take it in different shapes (bound
        parameter names vs mapped attributes, bare keys), so each layer says."""

    def bind(self, api: str, op: str) -> Op:
        method = getattr(self, f"api_{api}")

        def run(rows: Any) -> None:
            method(op, rows)

        return run


class SqlAlchemyCoreBatch(_SqlAlchemyBatch):
    layer = "Core"
    apis = (
        BatchApi("executemany", ALL,
                 "Connection.execute(statement, [parameter dicts]) + commit(): INSERT "
                 "batched by insertmanyvalues (multi-row VALUES), UPDATE/DELETE by key "
                 "through the driver's executemany"),
    )

    def _setup(self) -> None:
        from sqlalchemy import bindparam, delete, insert, update

        t = self.table_obj
        self.statements = {
            "insert": insert(t),
            "update": update(t).where(t.c.f_key == bindparam("b_key"))
                               .values(f_value=bindparam("b_value")),
            "delete": delete(t).where(t.c.f_key == bindparam("b_key")),
        }

    def _keyed_input(self, data: BatchData) -> Any:
        # the statements bind b_key/b_value: Core refuses bind names equal to columns
        if data.op == "update":
            return [{"b_key": k, "b_value": v} for v, k in data.row_params]
        return [{"b_key": k} for (k,) in data.row_params]

    def api_executemany(self, op: str, rows: list[dict[str, Any]]) -> None:
        self.sa.execute(self.statements[op], rows)
        self.sa.commit()


class SqlAlchemyOrmBatch(_SqlAlchemyBatch):
    layer = "ORM"
    apis = (
        BatchApi("bulk_insert", ("insert",),
                 "Session.execute(insert(Model), [dicts]): ORM bulk INSERT "
                 "(insertmanyvalues) + commit()"),
        BatchApi("add_all", ("insert",),
                 "Session.add_all([Model(...)]) + commit(): the unit of work builds and "
                 "flushes one object per row"),
        BatchApi("bulk_update", ("update",),
                 "Session.execute(update(Model), [dicts]): ORM bulk UPDATE by primary key "
                 "(the driver's executemany) + commit()"),
        BatchApi("delete_in", ("delete",),
                 "Session.execute(delete(Model).where(key.in_(page))) per --page-size keys "
                 "+ commit()"),
    )

    def _setup(self) -> None:
        from sqlalchemy.orm import registry

        self.model: Any = type("BatchRow", (), {"__module__": __name__})
        registry().map_imperatively(self.model, self.table_obj)

    def _keyed_input(self, data: BatchData) -> Any:
        # ORM bulk UPDATE matches rows by mapped attribute; delete_in pages bare keys
        if data.op == "update":
            return [{"f_key": k, "f_value": v} for v, k in data.row_params]
        return list(data.keys)

    def _session(self) -> Any:
        from sqlalchemy.orm import Session

        return Session(self.sa, expire_on_commit=False)

    def api_bulk_insert(self, op: str, rows: list[dict[str, Any]]) -> None:
        from sqlalchemy import insert

        with self._session() as session:
            session.execute(insert(self.model), rows)
            session.commit()

    def api_add_all(self, op: str, rows: list[dict[str, Any]]) -> None:
        model = self.model
        with self._session() as session:
            session.add_all([model(**row) for row in rows])
            session.commit()

    def api_bulk_update(self, op: str, rows: list[dict[str, Any]]) -> None:
        from sqlalchemy import update

        with self._session() as session:
            session.execute(update(self.model), rows)
            session.commit()

    def api_delete_in(self, op: str, keys: list[str]) -> None:
        from sqlalchemy import delete

        column = self.model.f_key
        with self._session() as session:
            for page in pages(keys, self.page_size):
                session.execute(delete(self.model).where(column.in_(page)),
                                execution_options={"synchronize_session": False})
            session.commit()
