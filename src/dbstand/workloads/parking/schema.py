"""The parking data model (spec "Data model") on SQLite, PostgreSQL and MariaDB.

Tables are `<prefix>t_product` ... `<prefix>t_account_transfer`, created and dropped
only through dbstand's ownership registry. Money is decimal(16,6) (text "%.6f" on
SQLite, which has no exact decimal); timestamps are whole seconds (text on SQLite).
Everything here works on an autocommit DB-API connection from db.connect().
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dbstand.sql.dialects import Dialect, dialect_for
from dbstand.sql.ownership import Ownership
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.workloads.parking.db import paramstyle
from dbstand.workloads.parking.values import db_money, to_money

WORKLOAD = "parking"


@dataclass(frozen=True)
class Column:
    name: str
    type: str            # id, ref:<entity>, money, ts, int, str:<n>
    null: bool = False


@dataclass(frozen=True)
class Entity:
    key: str                                  # table suffix after "<prefix>t_"
    columns: tuple[Column, ...]
    unique: tuple[tuple[str, ...], ...] = ()
    indexes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def of_type(self, kind: str) -> frozenset[str]:
        return frozenset(c.name for c in self.columns if c.type == kind)


C = Column
#: in creation order (parents first)
ENTITIES: tuple[Entity, ...] = (
    Entity("product", (C("id", "id"), C("name", "str:100"), C("display_name", "str:200", True),
                       C("places_avail", "int"), C("price", "money")), unique=(("name",),)),
    Entity("order", (C("id", "id"), C("product_id", "ref:product"),
                     C("user_eid", "str:64", True), C("ticket_number", "str:32", True),
                     C("plate_number", "str:32", True), C("start_ts", "ts"),
                     C("paid_until_ts", "ts"), C("finish_ts", "ts", True),
                     C("paid_amount", "money"), C("price", "money", True)),
           unique=(("product_id", "ticket_number"),),
           indexes=("plate_number", "user_eid", "paid_until_ts")),
    Entity("payment", (C("id", "id"), C("trans_number", "str:64"), C("order_id", "ref:order"),
                       C("ts", "ts"), C("hours", "money"), C("amount", "money"),
                       C("payment_ts", "ts", True), C("cancel_ts", "ts", True)),
           unique=(("trans_number",),)),
    Entity("account", (C("id", "id"), C("user_eid", "str:64"), C("balance", "money"),
                       C("reserved", "money")), unique=(("user_eid",),)),
    Entity("account_receipt", (C("id", "id"), C("ts", "ts"), C("account_id", "ref:account"),
                               C("src_order_id", "ref:order"), C("amount", "money"))),
    Entity("account_consume", (C("id", "id"), C("ts", "ts"), C("account_id", "ref:account"),
                               C("dst_payment_id", "ref:payment"), C("amount", "money"),
                               C("is_reserved", "int"))),
    Entity("account_transfer", (C("id", "id"), C("ts", "ts"), C("trans_number", "str:64"),
                                C("src_account_id", "ref:account"),
                                C("dst_account_id", "ref:account"), C("amount", "money")),
           unique=(("trans_number",),)),
)
ENTITY = {e.key: e for e in ENTITIES}

#: seed parks: name, display name, places, hourly price
SEED: tuple[tuple[str, str, int, Decimal], ...] = (
    ("1333", "Park 1333", 8000, Decimal(51)),
    ("15001", "Park 15001", 5000, Decimal(60)),
)

def table_name(prefix: str, key: str) -> str:
    return f"{prefix}t_{key}"


def tables(prefix: str) -> dict[str, str]:
    """entity key -> table name, in creation order."""
    return {e.key: table_name(prefix, e.key) for e in ENTITIES}


def create_statements(dialect: Dialect, prefix: str, entity: Entity) -> list[str]:
    """CREATE TABLE, then CREATE INDEX statements of one entity in a SQL `dialect`."""
    types = dialect.column_types
    table = table_name(prefix, entity.key)
    parts = []
    for col in entity.columns:
        base, _, arg = col.type.partition(":")
        sql_type = f"VARCHAR({arg})" if base == "str" else types[base]
        null = "" if base == "id" else (" NULL" if col.null else " NOT NULL")
        parts.append(f"{col.name} {sql_type}{null}")
    for cols in entity.unique:
        parts.append(f"UNIQUE ({', '.join(cols)})")
    for col in entity.columns:
        if col.type.startswith("ref:"):
            parent = table_name(prefix, col.type[4:])
            parts.append(f"FOREIGN KEY ({col.name}) REFERENCES {parent} (id)")
    tail = dialect.table_options + dialect.table_charset
    statements = [f"CREATE TABLE {table} ({', '.join(parts)}){tail}"]
    statements += [f"CREATE INDEX {table}_{col}_idx ON {table} ({col})"
                   for col in entity.indexes]
    return statements


def _kind(conn: Any) -> str:
    module = type(conn).__module__
    if module.startswith("sqlite3"):
        return "sqlite"
    return "postgresql" if module.startswith(("psycopg", "pg8000")) else "mysql"


def _ownership(conn: Any, prefix: str) -> Ownership:
    kind = _kind(conn)
    return Ownership(conn.cursor(), dialect_for(kind), paramstyle(kind), prefix)


def ensure_schema(conn: Any, prefix: str) -> bool:
    """Create the tables (through the registry) unless all exist, then add missing seed
    rows. True when the tables were (re)created. Refuses tables dbstand does not own."""
    own = _ownership(conn, prefix)
    names = list(tables(prefix).values())
    for name in names:
        own.check(name)
    created = not all(own.exists(name) for name in names)
    if created:
        for name in reversed(names):  # a partial set: start afresh, children first
            if own.exists(name):
                own.drop(name)
        dialect = dialect_for(_kind(conn))
        for entity in ENTITIES:
            first, *indexes = create_statements(dialect, prefix, entity)
            own.create(table_name(prefix, entity.key), first, WORKLOAD)
            for sql in indexes:
                own.cur.execute(sql)
    seed(conn, prefix)
    return created


def drop_schema(conn: Any, prefix: str) -> None:
    """Drop the parking tables dbstand owns (children first)."""
    own = _ownership(conn, prefix)
    for name in reversed(list(tables(prefix).values())):
        if own.owns(name):
            own.drop(name)


def _sql(conn: Any, text: str) -> str:
    return to_paramstyle(text, paramstyle(_kind(conn)))


def seed(conn: Any, prefix: str) -> None:
    """Insert the seed parks that are missing."""
    dialect, table = dialect_for(_kind(conn)), table_name(prefix, "product")
    cur = conn.cursor()
    for name, display, places, price in SEED:
        cur.execute(_sql(conn, f"SELECT 1 FROM {table} WHERE name = ?"), (name,))
        if cur.fetchone() is None:
            cur.execute(_sql(conn, f"INSERT INTO {table} (name, display_name, places_avail, "
                                   "price) VALUES (?, ?, ?, ?)"),
                        (name, display, places, db_money(dialect, price)))


def reseed(conn: Any, prefix: str) -> None:
    """Put the seed parks' places and prices back (a suite pass lowers park 1333's)."""
    dialect, table = dialect_for(_kind(conn)), table_name(prefix, "product")
    cur = conn.cursor()
    for name, _display, places, price in SEED:
        cur.execute(_sql(conn, f"UPDATE {table} SET places_avail = ?, price = ? "
                               "WHERE name = ?"), (places, db_money(dialect, price), name))


def totals(conn: Any, prefix: str) -> dict[str, Any]:
    """Consistency figures: row counts, money sums (Decimal), places per park."""
    t = tables(prefix)
    cur = conn.cursor()

    def scalar(sql: str) -> Any:
        cur.execute(sql)
        return cur.fetchone()[0]

    def total(table: str, column: str, where: str = "") -> Decimal:
        # summed in Python: exact on SQLite's text decimals too
        cur.execute(f"SELECT {column} FROM {table}{where}")
        return sum((to_money(row[0]) for row in cur.fetchall()), Decimal(0))

    cur.execute(f"SELECT name, places_avail FROM {t['product']} ORDER BY name")
    places = {str(name): int(n) for name, n in cur.fetchall()}
    out: dict[str, Any] = {"places": places}
    for key in ("order", "payment", "account", "account_receipt", "account_consume",
                "account_transfer"):
        out[f"{key}s"] = int(scalar(f"SELECT count(*) FROM {t[key]}"))
    out["open_orders"] = int(scalar(f"SELECT count(*) FROM {t['order']} "
                                    "WHERE finish_ts IS NULL"))
    out["paid_payments"] = int(scalar(f"SELECT count(*) FROM {t['payment']} "
                                      "WHERE payment_ts IS NOT NULL"))
    out["cancelled_payments"] = int(scalar(f"SELECT count(*) FROM {t['payment']} "
                                           "WHERE cancel_ts IS NOT NULL"))
    out["balance"] = total(t["account"], "balance")
    out["reserved"] = total(t["account"], "reserved")
    out["paid_amount"] = total(t["order"], "paid_amount")
    out["receipt_amount"] = total(t["account_receipt"], "amount")
    out["consumed_amount"] = total(t["account_consume"], "amount", " WHERE is_reserved = 0")
    out["transfer_amount"] = total(t["account_transfer"], "amount")
    return out
