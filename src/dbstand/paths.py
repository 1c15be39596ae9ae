"""Where dbstand keeps its own state (managed servers' records)."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir(create: bool = True) -> Path:
    """`$DBSTAND_HOME`, else `$XDG_STATE_HOME/dbstand`, else `~/.local/state/dbstand`
    (made when `create`: readers of records need no folder)."""
    home = os.environ.get("DBSTAND_HOME")
    if home:
        path = Path(home)
    else:
        xdg = os.environ.get("XDG_STATE_HOME")
        path = Path(xdg) / "dbstand" if xdg else Path.home() / ".local" / "state" / "dbstand"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path
