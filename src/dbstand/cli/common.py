"""Helpers shared by CLI commands: list options, console, argv redaction."""

from __future__ import annotations

import re
import sys

from rich.console import Console

from dbstand.errors import UserError

console = Console()
err_console = Console(stderr=True)

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
