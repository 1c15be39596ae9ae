"""Collections dbstand owns on a MongoDB-wire server, and the refusal to touch any other.

The same rule as sql/ownership.py: a registry collection (`<prefix>owned`) lists the
collections dbstand created, one document `{_id: name, workload, created_at}` each;
dbstand drops or refills a collection only if the registry names it. A collection
with a dbstand-like name that the registry does not list belongs to someone else
and is refused.

The registry is recognised by its mark, never by its shape: when dbstand creates it,
its first document names the registry itself with workload `dbstand-registry` (as the
Tarantool registry's tuple does). An unmarked registry is read only when it holds
documents and each is one dbstand writes (older dbstand versions wrote no mark, and
dropped the registry with its last entry); an empty unmarked one is someone else's.
"""

from __future__ import annotations

import time
from typing import Any

from dbstand.errors import OwnershipError
from dbstand.targets.prefix import check_prefix, legacy_rows_ok, not_our_registry, not_ours

REGISTRY_FIELDS = {"_id", "workload", "created_at"}
#: the workload of the document that marks a registry as dbstand's
MARK = "dbstand-registry"


class MongoOwnership:
    """Creates and drops the collections of one prefix through a pymongo `Database`."""

    def __init__(self, db: Any, prefix: str):
        self.db = db
        self.prefix = check_prefix(prefix)
        self.registry = f"{prefix}owned"

    def exists(self, name: str) -> bool:
        return bool(self.db.list_collection_names(filter={"name": name}))

    def owns(self, name: str) -> bool:
        if name == self.registry or not self.exists(self.registry):
            return False
        return self.db[self.registry].find_one({"_id": name}) is not None

    def _check_registry(self) -> None:
        """Refuse a registry-named collection that dbstand did not make: it has the
        mark, or (written before the mark) holds only documents dbstand writes."""
        if not self.exists(self.registry):
            return
        docs = list(self.db[self.registry].find(limit=1000))
        shaped = all(set(d) == REGISTRY_FIELDS for d in docs)
        rows = [(d["_id"], d["workload"], d["created_at"]) for d in docs] if shaped else []
        # the mark is one of those documents: a registry dbstand made is never empty
        if not (shaped and legacy_rows_ok(rows, self.prefix)):
            raise not_our_registry("collection", self.registry)

    def check(self, name: str) -> None:
        """Refuse early (before any run starts) if `name` is someone else's."""
        self._check_registry()
        if self.exists(name) and not self.owns(name):
            raise not_ours("collection", name)

    def create(self, name: str, workload: str) -> Any:
        """(Re)create collection `name` empty and register it; return the collection."""
        if not name.startswith(self.prefix):
            raise OwnershipError(f"refusing to create {name}: not under prefix {self.prefix}")
        self.check(name)
        if self.exists(name):
            self.db.drop_collection(name)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        registry = self.db[self.registry]
        registry.replace_one({"_id": self.registry}, {"_id": self.registry, "workload": MARK,
                                                      "created_at": stamp}, upsert=True)
        self.db[self.registry].replace_one(
            {"_id": name}, {"_id": name, "workload": workload, "created_at": stamp},
            upsert=True)
        return self.db.create_collection(name)

    def drop(self, name: str) -> None:
        """Drop a collection dbstand owns; drop the registry too once it is empty."""
        if not self.owns(name):
            raise OwnershipError(f"refusing to drop {name}: dbstand did not create it")
        self.db.drop_collection(name)
        registry = self.db[self.registry]
        registry.delete_one({"_id": name})
        if registry.count_documents({"_id": {"$ne": self.registry}}) == 0:
            self.db.drop_collection(self.registry)  # only its mark is left
