"""Where dbstand keeps its own state (managed servers' records) and its build cache."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """`$DBSTAND_HOME`, else `$XDG_STATE_HOME/dbstand`, else `~/.local/state/dbstand`."""
    home = os.environ.get("DBSTAND_HOME")
    if home:
        path = Path(home)
    else:
        xdg = os.environ.get("XDG_STATE_HOME")
        path = Path(xdg) / "dbstand" if xdg else Path.home() / ".local" / "state" / "dbstand"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """`$DBSTAND_CACHE`, else `$XDG_CACHE_HOME/dbstand`, else `~/.cache/dbstand`."""
    root = os.environ.get("DBSTAND_CACHE")
    if root:
        path = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = Path(xdg) / "dbstand" if xdg else Path.home() / ".cache" / "dbstand"
    path.mkdir(parents=True, exist_ok=True)
    return path
