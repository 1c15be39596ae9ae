"""Turn a driver's connection failure into one clear line.

Drivers word failures differently (libpq, pure-Python protocols, MySQL clients);
users need to know only whether the server was unreachable, refused the
credentials, or lacks the database, and which URL (password redacted) was meant.
"""

from __future__ import annotations

from dbstand.errors import TargetError
from dbstand.targets.url import TargetURL

_AUTH = ("password authentication failed", "authentication failed", "access denied",
         "incorrect password", "invalid password", "no password supplied",
         "password is required", "28p01", "28000")
_UNREACHABLE = ("connection refused", "could not connect", "can't connect",
                "cannot connect", "errno 111", "timed out", "timeout", "no route to host",
                "name or service not known", "could not translate host", "unreachable",
                "network is unreachable", "errno -2", "errno -3")
_NO_DB = ("does not exist", "unknown database", "unable to open database")


def connect_error(exc: BaseException, target: TargetURL) -> TargetError:
    """A TargetError naming what went wrong connecting to `target`."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if target.password:
        text = text.replace(target.password, "***")
    lower = text.lower()
    where = target.redacted()
    if any(s in lower for s in _AUTH):
        return TargetError(f"authentication failed for {where}: wrong user or password")
    if any(s in lower for s in _UNREACHABLE):
        return TargetError(f"cannot connect to {where}: server unreachable ({_short(text)})")
    if any(s in lower for s in _NO_DB):
        return TargetError(f"cannot use {where}: {_short(text)}")
    return TargetError(f"cannot connect to {where}: {_short(text)}")


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
