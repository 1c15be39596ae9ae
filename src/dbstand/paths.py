"""Where dbstand keeps its own state (managed servers' records) and its build cache."""

from __future__ import annotations

import os
from pathlib import Path


def _dir(own: str, xdg: str, default: Path) -> Path:
    """`$<own>`, else `$<xdg>/dbstand`, else `default`; made if missing."""
    home = os.environ.get(own)
    if home:
        path = Path(home)
    else:
        base = os.environ.get(xdg)
        path = Path(base) / "dbstand" if base else default
    path.mkdir(parents=True, exist_ok=True)
    return path


def state_dir() -> Path:
    """`$DBSTAND_HOME`, else `$XDG_STATE_HOME/dbstand`, else `~/.local/state/dbstand`."""
    return _dir("DBSTAND_HOME", "XDG_STATE_HOME", Path.home() / ".local" / "state" / "dbstand")


def cache_dir() -> Path:
    """`$DBSTAND_CACHE`, else `$XDG_CACHE_HOME/dbstand`, else `~/.cache/dbstand`."""
    return _dir("DBSTAND_CACHE", "XDG_CACHE_HOME", Path.home() / ".cache" / "dbstand")
