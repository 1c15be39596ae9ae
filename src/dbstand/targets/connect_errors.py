"""Turn a driver's connection failure into one clear line.

Drivers word failures differently (libpq, pure-Python protocols, MySQL clients);
users need to know only whether the server was unreachable, refused the
credentials, or lacks the database, and which URL (password redacted) was meant.
"""

from __future__ import annotations

import re
from typing import Any

from dbstand.errors import TargetError
from dbstand.targets.greeting import first_bytes, what_answers
from dbstand.targets.url import TargetURL

_AUTH = ("password authentication failed", "authentication failed", "access denied",
         "incorrect password", "invalid password", "no password supplied",
         "password is required", "28p01", "28000", "is not allowed to connect")
_UNREACHABLE = ("connection refused", "could not connect", "can't connect",
                "cannot connect", "errno 111", "timed out", "timeout", "no route to host",
                "name or service not known", "could not translate host", "unreachable",
                "network is unreachable", "errno -2", "errno -3")
_NO_DB = ("does not exist", "unknown database", "unable to open database")
#: MySQL/MariaDB 1044: the login worked, but the database is not this user's to use.
#: MariaDB answers it also for a database that does not exist when the user has no
#: global grant (it does not tell which), so it is never a wrong password.
_DB_DENIED = re.compile(r"access denied for user \S+ to database '([^']*)'")
#: MySQL/MariaDB 1049 (a user with global grants asked for a missing database)
_DB_UNKNOWN = re.compile(r"unknown database '([^']*)'")


def _message(exc: BaseException) -> str:
    """The driver's message without its error-code tuple: (2003, "Can't ...") -> Can't ..."""
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        return str(args[1])
    return str(exc)


def connect_error(exc: BaseException, target: TargetURL) -> TargetError:
    """A TargetError naming what went wrong connecting to `target`."""
    full = " ".join(str(exc).split()) or type(exc).__name__  # matched (errno included)
    text = " ".join(_message(exc).split()) or full             # shown
    if target.password:
        full = full.replace(target.password, "***")
        text = text.replace(target.password, "***")
    lower = full.lower()
    where = target.redacted()
    if (unknown := _DB_UNKNOWN.search(lower)) is not None:
        return TargetError(f"cannot use {where}: database {_db_name(text, unknown)!r} "
                           "does not exist")
    if (denied := _DB_DENIED.search(lower)) is not None:
        user = target.user or "root"
        return TargetError(f"cannot use {where}: user {user!r} may not use database "
                           f"{_db_name(text, denied)!r} (it does not exist, or {user!r} "
                           "has no grant on it); the password was accepted")
    if any(s in lower for s in _AUTH) or ("user '" in lower and "not found" in lower):
        return TargetError(f"authentication failed for {where}: wrong user or password")
    refused = "refused" in lower or "errno 111" in lower
    wrong = None if refused else _wrong_server(target)
    if wrong:
        return TargetError(f"cannot connect to {where}: {wrong}")
    if any(s in lower for s in _UNREACHABLE):
        return TargetError(f"cannot connect to {where}: server unreachable ({_short(text)})")
    if any(s in lower for s in _NO_DB):
        return TargetError(f"cannot use {where}: {_short(text)}")
    return TargetError(f"cannot connect to {where}: {_short(text)}")


def _db_name(text: str, match: re.Match[str]) -> str:
    """The database name as the server wrote it (the match ran on the lower-cased text)."""
    found = re.search(re.escape(match.group(1)), text, re.IGNORECASE)
    return found.group(0) if found else match.group(1)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _wrong_server(target: TargetURL) -> str | None:
    """When another kind of server answers on the port, say which (a wrong port).

    A kind that speaks first must greet as itself (its descriptor's `greeting`); a kind
    that waits for the client must not speak at all."""
    from dbstand.targets.kinds import get_kind

    kind = get_kind(target.kind)
    if kind.embedded or kind.default_port is None or not target.host \
            or target.host.startswith("/") or (kind.speaks_first and not kind.greeting):
        return None
    port = target.port or kind.default_port
    try:
        data = first_bytes(target.host, port, 2.0)
    except OSError:
        return None
    ours = kind.load("greeting")(data) if kind.speaks_first else not data
    if not ours:
        return f"{what_answers(data)} answers on {target.host}:{port}, not {kind.title}"
    return None
