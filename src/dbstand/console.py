"""The shared consoles, password redaction in free text, and comma-separated option
lists: below every layer that prints or parses options (workloads, studies, cli)."""

from __future__ import annotations

import os
import re
import sys

from rich.console import Console

from dbstand.errors import UserError


def _width() -> int | None:
    """Terminal width when there is a terminal; otherwise (CI logs, pipes) wide enough
    that tables never truncate a number."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return None
    return 160


console = Console(width=_width())
err_console = Console(stderr=True)


def reset_consoles() -> None:
    """Look again at sys.stdout, sys.stderr and the environment (terminal or not, width,
    colours) for the shared consoles, which are made at import and imported by name
    everywhere. A program that calls `main()` in-process with its own streams (the
    test suite does) calls this after swapping them."""
    console.__init__(width=_width())  # type: ignore[misc]
    err_console.__init__(stderr=True)  # type: ignore[misc]

_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]*):(?P<pw>[^@\s/]*)@",
                           re.IGNORECASE)


def split_list(value: str | None, what: str) -> list[str]:
    """Comma-separated CLI lists (`--stack a,b`) become matrix axes."""
    if value is None:
        return []
    items = [v.strip() for v in value.split(",")]
    if any(not v for v in items):
        raise UserError(f"{what}: empty item in {value!r}")
    return items


def split_ints(value: str | None, what: str) -> list[int]:
    out = []
    for item in split_list(value, what):
        try:
            out.append(int(item.replace("_", "")))
        except ValueError:
            raise UserError(f"{what}: {item!r} is not a whole number") from None
    return out


def redact_text(text: str) -> str:
    """Hide URL passwords in free text (argv, messages)."""
    return _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:***@", text)


def redacted_argv() -> list[str]:
    return [redact_text(a) for a in sys.argv]


def check_port(port: int | None, option: str = "--port") -> None:
    """A port option: a number a TCP port can be, or one clear error."""
    if port is not None and not 1 <= port <= 65535:
        raise UserError(f"{option} must be a TCP port from 1 to 65535, not {port}")
