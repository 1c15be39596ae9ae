"""Helpers of the batch tests (the MariaDB fixture is conftest's `mariadb`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: small, quick settings: the tests check mechanics, not speed
FAST = ["--warmup", "1", "--min-iterations", "2", "--max-iterations", "3", "--ci", "50"]


def case_records(path: Path) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def by_key(records: list[dict[str, Any]]) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """Records by (stack or 'limit', api, op, rows)."""
    return {("limit" if r["limit"] else r["stack"], r["api"], r["op"], r["rows"]): r
            for r in records}
