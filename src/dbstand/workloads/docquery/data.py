"""The docquery data set: the `posts` collection and its relational twin.

Documents are `{_id: ObjectId, title: "Post title", created: datetime}` (spec:
docquery.md), generated from a seed, so every run and every target holds the same
set. The SQL twin is `<prefix>posts (id varchar(24) COLLATE "C" PRIMARY KEY, title
text, created timestamp)` with the ObjectId as 24 lowercase hex digits.

Why the same 30 come back everywhere: ids are generated strictly increasing (a
timestamp that grows every 1,024 documents, a fixed 5-byte "machine" part, a counter
that wraps only at a timestamp step) and the first batch is inserted alone, in
order, before the rest goes in parallel (`insert_parallel`: later batches may land in
any order, the first page is always first). A MongoDB-wire server with no sort
returns documents in natural (insertion) order: FerretDB's SQLite backend scans by
rowid, its PostgreSQL backend reads a freshly filled heap front to back, and MongoDB
itself returns insertion order for an untouched collection. `ORDER BY id` on the
SQL twin (byte order, the "C" collation) is therefore the same order, and
`find(limit=30)` and `SELECT ... ORDER BY id LIMIT 30` give the same 30 documents;
`verify.py` checks it.

Loading is untimed but reported (documents/s). A loaded set is reused while the
meta record (`<prefix>docquery_meta`) says it has the same size, seed and format and
the collection holds that many documents. That count is a full scan on FerretDB 1.x
(its `count` reads every document: over 10 s for 1,000,000 on SQLite here), so a
statement may take longer than connecting: the client waits the read limit
(DBSTAND_READ_TIMEOUT) for an answer, the connect limit only for the connection.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbstand.targets.url import TargetURL

DEFAULT_SIZE = 1_000_000
DEFAULT_SEED = 3  # the study's number among the seeds
DEFAULT_PREFIX = "dbstand_"
PAGE = 30
TITLE = "Post title"
#: bump when the generated documents change, so that old loaded sets are not reused
FORMAT = 1
BATCH = 10_000
#: insert_many calls in flight while loading a MongoDB-wire server
LOAD_CONNECTIONS = 4
WORKLOAD = "docquery"
CREATED_FORMAT = "%Y-%m-%d %H:%M:%S"

_PER_SECOND = 1024  # documents per ObjectId timestamp step (a divisor of 2**24)
_EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True)
class Post:
    """One generated document."""

    oid: bytes  # the 12 bytes of its ObjectId
    created: datetime  # naive, UTC, whole seconds (BSON keeps ms, SQL timestamp us)

    @property
    def id(self) -> str:
        return self.oid.hex()

    def answer(self) -> dict[str, Any]:
        """The item the endpoint must return for this document."""
        return {"_id": self.id, "title": TITLE, "created": self.created.strftime(CREATED_FORMAT)}


def generate(size: int, seed: int = DEFAULT_SEED) -> Iterator[Post]:
    """The `size` documents of `seed`, in strictly increasing id order."""
    if size < 0:
        raise ValueError("size must be >= 0")
    rng = random.Random(seed)
    machine = rng.getrandbits(40).to_bytes(5, "big")
    base = 1_430_000_000 + rng.getrandbits(20)  # spring 2015, as the study
    for i in range(size):
        ts = base + i // _PER_SECOND
        oid = ts.to_bytes(4, "big") + machine + (i & 0xFFFFFF).to_bytes(3, "big")
        created = _EPOCH + timedelta(seconds=ts + rng.getrandbits(12))
        yield Post(oid, created)


def expected_page(size: int, seed: int = DEFAULT_SEED, page: int = PAGE) -> list[dict[str, Any]]:
    """What `GET /api/posts/query/` must answer for a set of `size` documents."""
    return [post.answer() for post in generate(min(size, page), seed)]


@dataclass
class LoadResult:
    """What a load did: reused the set, or filled it at `rate` documents/s."""

    target: str
    name: str  # collection or table
    documents: int
    reused: bool
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.documents / self.seconds if self.seconds > 0 else 0.0

    def describe(self) -> str:
        if self.reused:
            return f"{self.target}: {self.name} reused ({self.documents:,} documents)"
        return (f"{self.target}: {self.name} loaded, {self.documents:,} documents in "
                f"{self.seconds:.1f} s ({self.rate:,.0f} documents/s)")


Progress = Callable[[int, int], None]


def _meta_matches(meta: dict[str, Any] | None, size: int, seed: int) -> bool:
    return (meta is not None and meta.get("size") == size and meta.get("seed") == seed
            and meta.get("format") == FORMAT)


# -- MongoDB wire -----------------------------------------------------------------

def load_mongo(db: Any, size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, *,
               prefix: str = DEFAULT_PREFIX, batch: int = BATCH, force: bool = False,
               progress: Progress | None = None) -> LoadResult:
    """Fill `<prefix>posts` in pymongo Database `db` with insert_many, unless the same
    set is there already. The meta record is written last: an interrupted load is
    never mistaken for a complete one."""
    from bson import ObjectId

    from dbstand.targets.mongodb.ownership import MongoOwnership

    own = MongoOwnership(db, prefix)
    name, meta_name = f"{prefix}posts", f"{prefix}{WORKLOAD}_meta"
    own.check(name)
    own.check(meta_name)
    target = f"mongodb {db.name}"
    if not force and own.owns(name) and own.owns(meta_name):
        meta = db[meta_name].find_one({"_id": "posts"})
        if _meta_matches(meta, size, seed) and db[name].estimated_document_count() == size:
            return LoadResult(target, name, size, reused=True)
    if own.owns(meta_name):
        db[meta_name].delete_many({})
    else:
        own.create(meta_name, WORKLOAD)
    coll = own.create(name, WORKLOAD)
    started = time.perf_counter()
    docs = ({"_id": ObjectId(post.oid), "title": TITLE, "created": post.created}
            for post in generate(size, seed))
    done = insert_parallel(coll, docs, batch=batch,
                           progress=(lambda n: progress(n, size)) if progress else None)
    seconds = time.perf_counter() - started
    db[meta_name].replace_one(
        {"_id": "posts"},
        {"_id": "posts", "size": size, "seed": seed, "format": FORMAT,
         "loaded_at": datetime.now(UTC).replace(tzinfo=None), "seconds": seconds},
        upsert=True)
    return LoadResult(target, name, done, reused=False, seconds=seconds)


def insert_parallel(coll: Any, docs: Iterable[dict[str, Any]], *, batch: int = BATCH,
                    connections: int = LOAD_CONNECTIONS,
                    progress: Callable[[int], None] | None = None) -> int:
    """A MongoDB-wire server's bulk path: insert_many(ordered=False) of `batch`
    documents, `connections` calls in flight on the client's pool (the server parses
    and stores one batch while the next is encoded) after the first batch, which goes
    alone so that it comes first in natural order; at most twice that many batches
    held in memory. Returns the documents inserted; a failed batch fails the load."""
    it = iter(docs)
    # the first batch alone: calls in flight interleave on the server, and the first
    # page must be the first in natural order (the module's docstring says why)
    done = 0
    if first := list(islice(it, batch)):
        done = len(coll.insert_many(first, ordered=False).inserted_ids)
        if progress:
            progress(done)
    with ThreadPoolExecutor(max_workers=connections) as pool:
        pending: set[Future[Any]] = set()
        while chunk := list(islice(it, batch)):
            pending.add(pool.submit(coll.insert_many, chunk, ordered=False))
            if len(pending) >= 2 * connections:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                done += sum(len(f.result().inserted_ids) for f in finished)
                if progress:
                    progress(done)
        for future in pending:
            done += len(future.result().inserted_ids)
    if progress:
        progress(done)
    return done


def drop_mongo(db: Any, prefix: str = DEFAULT_PREFIX) -> None:
    """Drop the docquery collections dbstand created in `db`."""
    from dbstand.targets.mongodb.ownership import MongoOwnership

    own = MongoOwnership(db, prefix)
    for name in (f"{prefix}posts", f"{prefix}{WORKLOAD}_meta"):
        if own.owns(name):
            own.drop(name)


# -- PostgreSQL -------------------------------------------------------------------

def load_postgresql(conn: Any, size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, *,
                    prefix: str = DEFAULT_PREFIX, batch: int = BATCH, force: bool = False,
                    progress: Progress | None = None) -> LoadResult:
    """Fill `<prefix>posts` through psycopg 3 connection `conn` with COPY, unless the
    same set is there already; the primary key is built after the copy (faster), and
    everything commits at once."""
    from dbstand.sql.dialects import POSTGRESQL
    from dbstand.sql.ownership import Ownership

    name, meta_name = f"{prefix}posts", f"{prefix}{WORKLOAD}_meta"
    target = f"postgresql {conn.info.dbname}"
    with conn.cursor() as cur:
        own = Ownership(cur, POSTGRESQL, "format", prefix)
        own.check(name)
        own.check(meta_name)
        if not force and own.owns(name) and own.owns(meta_name):
            cur.execute(f"SELECT size, seed, format FROM {meta_name} WHERE name = 'posts'")
            row = cur.fetchone()
            meta = dict(zip(("size", "seed", "format"), row, strict=True)) if row else None
            if _meta_matches(meta, size, seed):
                cur.execute(f"SELECT count(*) FROM {name}")
                if cur.fetchone()[0] == size:
                    conn.rollback()
                    return LoadResult(target, name, size, reused=True)
        own.create(meta_name, f"CREATE TABLE {meta_name} (name varchar(64) PRIMARY KEY, "
                              "size bigint NOT NULL, seed bigint NOT NULL, "
                              "format integer NOT NULL, seconds double precision)", WORKLOAD)
        own.create(name, f'CREATE TABLE {name} (id varchar(24) COLLATE "C" NOT NULL, '
                         "title text NOT NULL, created timestamp)", WORKLOAD)
        started = time.perf_counter()
        done = 0
        with cur.copy(f"COPY {name} (id, title, created) FROM STDIN") as copy:
            lines: list[str] = []
            for post in generate(size, seed):
                lines.append(f"{post.id}\t{TITLE}\t{post.created:{CREATED_FORMAT}}\n")
                if len(lines) >= batch:
                    copy.write("".join(lines))
                    done += len(lines)
                    lines = []
                    if progress:
                        progress(done, size)
            if lines:
                copy.write("".join(lines))
                done += len(lines)
        cur.execute(f"ALTER TABLE {name} ADD PRIMARY KEY (id)")
        seconds = time.perf_counter() - started
        cur.execute(f"INSERT INTO {meta_name} (name, size, seed, format, seconds) "
                    "VALUES ('posts', %s, %s, %s, %s)", (size, seed, FORMAT, seconds))
    conn.commit()
    with conn.cursor() as cur:  # fresh statistics: the planner must use the key
        cur.execute(f"ANALYZE {name}")
    conn.commit()
    return LoadResult(target, name, done, reused=False, seconds=seconds)


def drop_postgresql(conn: Any, prefix: str = DEFAULT_PREFIX) -> None:
    """Drop the docquery tables dbstand created."""
    from dbstand.sql.dialects import POSTGRESQL
    from dbstand.sql.ownership import Ownership

    with conn.cursor() as cur:
        own = Ownership(cur, POSTGRESQL, "format", prefix)
        for name in (f"{prefix}posts", f"{prefix}{WORKLOAD}_meta"):
            if own.owns(name):
                own.drop(name)
    conn.commit()


# -- by URL -----------------------------------------------------------------------

@contextmanager
def _open_mongo(url: TargetURL) -> Iterator[Any]:
    import pymongo

    from dbstand.drivers import connect_timeout_s, open_with, read_timeout_s

    connect_ms = connect_timeout_s() * 1000
    # the read limit for answers: the reuse check's count scans every document on
    # FerretDB, far longer than a connect takes (the module's docstring)
    client: Any = pymongo.MongoClient(url.secret(), serverSelectionTimeoutMS=connect_ms,
                                      connectTimeoutMS=connect_ms,
                                      socketTimeoutMS=read_timeout_s() * 1000)
    try:
        # pymongo connects lazily: a refusing or silent server fails here, one line
        open_with(lambda: client.admin.command("ping"), url)
        yield client[url.database or "dbstand"]
    finally:
        client.close()


@contextmanager
def _open_postgresql(url: TargetURL) -> Iterator[Any]:
    from dbstand.drivers import open_with
    from dbstand.drivers import psycopg as psycopg_driver

    with open_with(lambda: psycopg_driver.connect(url, autocommit=False), url) as conn:
        yield conn


def _mongo_meta(db: Any, meta_name: str) -> dict[str, Any] | None:
    if meta_name not in db.list_collection_names():
        return None
    meta: dict[str, Any] | None = db[meta_name].find_one({"_id": "posts"})
    return meta


def _postgresql_meta(conn: Any, meta_name: str) -> dict[str, Any] | None:
    from dbstand.sql.dialects import POSTGRESQL

    with conn.cursor() as cur:
        cur.execute(POSTGRESQL.table_exists.replace("?", "%s"), (meta_name,))
        if cur.fetchone() is None:
            return None
        cur.execute(f"SELECT size, seed, format FROM {meta_name} WHERE name = 'posts'")
        row = cur.fetchone()
    return dict(zip(("size", "seed", "format"), row, strict=True)) if row else None


@dataclass(frozen=True)
class Store:
    """Where the set lives on one kind of target: how it is opened, loaded and its
    metadata read (a collection per post in MongoDB, a JSONB row in PostgreSQL)."""

    kind: str                                           # the target kind holding it
    open: Callable[[TargetURL], AbstractContextManager[Any]]
    load: Callable[..., LoadResult]                     # load_mongo's signature
    meta: Callable[[Any, str], dict[str, Any] | None]   # the set's metadata, if any


STORES = (Store("mongodb", _open_mongo, load_mongo, _mongo_meta),
          Store("postgresql", _open_postgresql, load_postgresql, _postgresql_meta))


def _store(kind: str) -> Store:
    for store in STORES:
        if store.kind == kind:
            return store
    from dbstand.errors import TargetError

    raise TargetError(f"docquery data lives in mongodb:// or postgresql:// targets, "
                      f"not {kind}")


@contextmanager
def connected(target: TargetURL | str) -> Iterator[tuple[str, Any]]:
    """(kind, handle) for a target URL: a pymongo Database on mongodb://, a psycopg
    connection on postgresql://; the password of a `dbstand server up` server is found
    when the URL has none."""
    from dbstand.targets.managed import password_for
    from dbstand.targets.url import parse_target_url

    url = parse_target_url(target) if isinstance(target, str) else target
    if url.password is None:
        url = url.with_password(password_for(url))
    with _store(url.kind).open(url) as handle:
        yield url.kind, handle


def load_url(target: TargetURL | str, size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, *,
             prefix: str = DEFAULT_PREFIX, force: bool = False,
             progress: Progress | None = None) -> LoadResult:
    """Load the set into a mongodb:// or postgresql:// target."""
    from dbstand.targets.prefix import check_prefix

    check_prefix(prefix)
    with connected(target) as (kind, handle):
        result: LoadResult = _store(kind).load(handle, size, seed, prefix=prefix, force=force,
                                               progress=progress)
        return result


def loaded_set(target: TargetURL | str, prefix: str = DEFAULT_PREFIX) -> tuple[int, int] | None:
    """(size, seed) of the complete set loaded in `target`, or None: what a stack's
    answer is checked against."""
    meta_name = f"{prefix}{WORKLOAD}_meta"
    with connected(target) as (kind, handle):
        meta = _store(kind).meta(handle, meta_name)
    if meta is None or meta.get("format") != FORMAT:
        return None
    return int(meta["size"]), int(meta["seed"])


def main(argv: list[str] | None = None) -> int:
    """`python -m dbstand.workloads.docquery.data URL [--size N] [--seed S]`: load by hand."""
    parser = argparse.ArgumentParser(description="Load the docquery posts data set.")
    parser.add_argument("url", help="mongodb:// or postgresql:// target")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--prefix", default=DEFAULT_PREFIX)
    parser.add_argument("--force", action="store_true", help="reload even if it matches")
    args = parser.parse_args(argv)
    result = load_url(args.url, args.size, args.seed, prefix=args.prefix, force=args.force)
    print(result.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
