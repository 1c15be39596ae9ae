"""Where a sqlite:// URL's database file is (the driver and the run lock both ask)."""

from __future__ import annotations

from pathlib import Path

from dbstand.errors import TargetError
from dbstand.targets.url import TargetURL


def path_of(target: TargetURL) -> str:
    """The database's path (":memory:" for an in-memory target); its folder must exist."""
    if target.is_memory:
        return ":memory:"
    path = Path(target.database or "").expanduser().resolve()
    if not path.parent.is_dir():
        raise TargetError(f"cannot use {target}: directory {path.parent} does not exist")
    return str(path)
