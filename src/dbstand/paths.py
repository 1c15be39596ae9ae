"""Where dbstand keeps its own files: managed servers' records (state) and the
server stacks' build cache."""

from __future__ import annotations

import os
from pathlib import Path


def _own_dir(variable: str, xdg_variable: str, *fallback: str) -> Path:
    """`$variable`, else `$xdg_variable/dbstand`, else `~/<fallback>/dbstand`; made."""
    own = os.environ.get(variable)
    if own:
        path = Path(own)
    else:
        xdg = os.environ.get(xdg_variable)
        path = Path(xdg) / "dbstand" if xdg else Path.home().joinpath(*fallback, "dbstand")
    path.mkdir(parents=True, exist_ok=True)
    return path


def state_dir() -> Path:
    """`$DBSTAND_HOME`, else `$XDG_STATE_HOME/dbstand`, else `~/.local/state/dbstand`."""
    return _own_dir("DBSTAND_HOME", "XDG_STATE_HOME", ".local", "state")


def cache_dir() -> Path:
    """`$DBSTAND_CACHE`, else `$XDG_CACHE_HOME/dbstand`, else `~/.cache/dbstand`."""
    return _own_dir("DBSTAND_CACHE", "XDG_CACHE_HOME", ".cache")
