"""Port options: a number a TCP port can be, or one clear error."""

from __future__ import annotations

from dbstand.errors import UserError


def check_port(port: int | None, option: str = "--port") -> None:
    if port is not None and not 1 <= port <= 65535:
        raise UserError(f"{option} must be a TCP port from 1 to 65535, not {port}")
