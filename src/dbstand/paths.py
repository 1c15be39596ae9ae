"""Where dbstand keeps its own state (managed servers' records)."""

from __future__ import annotations

import os
from pathlib import Path

from dbstand.errors import UserError


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
        try:
            path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise UserError(f"dbstand's state folder {path} is a file, not a folder (set "
                            "DBSTAND_HOME to a folder)") from None
        except OSError as exc:
            raise UserError(f"cannot make dbstand's state folder {path}: {exc.strerror} "
                            "(set DBSTAND_HOME to a writable folder)") from None
    return path
