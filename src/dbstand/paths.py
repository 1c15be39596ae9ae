"""Where dbstand keeps its own files: managed servers' records (state) and the
server stacks' build cache."""

from __future__ import annotations

import os
from pathlib import Path

from dbstand.errors import UserError


def _own_dir(what: str, variable: str, xdg_variable: str, *fallback: str,
             create: bool = True) -> Path:
    """`$variable`, else `$xdg_variable/dbstand`, else `~/<fallback>/dbstand`; made when
    `create` (readers of records need no folder), one line when it cannot be."""
    own = os.environ.get(variable)
    if own:
        path = Path(own)
    else:
        xdg = os.environ.get(xdg_variable)
        path = Path(xdg) / "dbstand" if xdg else Path.home().joinpath(*fallback, "dbstand")
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise UserError(f"dbstand's {what} folder {path} is a file, not a folder (set "
                            f"{variable} to a folder)") from None
        except OSError as exc:
            raise UserError(f"cannot make dbstand's {what} folder {path}: {exc.strerror} "
                            f"(set {variable} to a writable folder)") from None
    return path


def state_dir(create: bool = True) -> Path:
    """`$DBSTAND_HOME`, else `$XDG_STATE_HOME/dbstand`, else `~/.local/state/dbstand`."""
    return _own_dir("state", "DBSTAND_HOME", "XDG_STATE_HOME", ".local", "state", create=create)


def cache_dir() -> Path:
    """`$DBSTAND_CACHE`, else `$XDG_CACHE_HOME/dbstand`, else `~/.cache/dbstand`."""
    return _own_dir("cache", "DBSTAND_CACHE", "XDG_CACHE_HOME", ".cache")
