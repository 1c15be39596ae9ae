"""The prefix of what dbstand owns in a database (tables, spaces, collections) and the
registry's mark: the same rules for every kind's ownership guard (sql/ownership.py,
targets/<kind>/ownership.py)."""

from __future__ import annotations

import re
from typing import Any

from dbstand.errors import OwnershipError, UserError

PREFIX_RE = re.compile(r"^[a-z][a-z0-9_]{0,30}_$")
DEFAULT_PREFIX = "dbstand_"
#: the mark on a registry dbstand created
REGISTRY_MARK = "dbstand ownership registry"
_STAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_WORKLOAD_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


def legacy_rows_ok(rows: list[Any], prefix: str) -> bool:
    """Whether an unmarked registry's rows are all rows dbstand writes (and there are
    some): how registries written before the mark are still recognised."""
    return bool(rows) and all(
        len(row) >= 3 and isinstance(row[0], str) and row[0].startswith(prefix)
        and isinstance(row[1], str) and bool(_WORKLOAD_RE.match(row[1]))
        and isinstance(row[2], str) and bool(_STAMP_RE.match(row[2]))
        for row in rows)


def not_our_registry(noun: str, registry: str) -> OwnershipError:
    return OwnershipError(f"{noun} {registry} exists but is not dbstand's registry: "
                          "refusing to touch it (use another --prefix)")


def not_ours(noun: str, name: str) -> OwnershipError:
    return OwnershipError(f"{noun} {name} exists and was not created by dbstand: refusing "
                          "to touch it (rename it, or give dbstand another --prefix)")


def check_prefix(prefix: str) -> str:
    if not PREFIX_RE.match(prefix):
        raise UserError(f"--prefix {prefix!r} must be lowercase letters, digits and _, "
                        "start with a letter and end with _ (e.g. dbstand_)")
    return prefix
