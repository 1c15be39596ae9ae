"""Placeholders: dbstand writes SQL with `?` and converts to the driver's paramstyle."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=512)
def to_paramstyle(sql: str, style: str) -> str:
    """Convert `?` placeholders to a DB-API paramstyle (qmark, format, pyformat, numeric).

    dbstand's own SQL never has `?` or `%` inside literals, so a plain scan is enough.
    """
    if style == "qmark":
        return sql
    if style in ("format", "pyformat"):
        return sql.replace("?", "%s")
    if style in ("numeric", "dollar"):
        mark = ":" if style == "numeric" else "$"
        parts = sql.split("?")
        return parts[0] + "".join(f"{mark}{i}{part}"
                                  for i, part in enumerate(parts[1:], start=1))
    raise ValueError(f"unsupported paramstyle {style!r}")


def placeholder(style: str, index: int) -> str:
    """The `index`-th (from 1) parameter's placeholder in a DB-API paramstyle (or
    asyncpg's `dollar`)."""
    forms = {"qmark": "?", "format": "%s", "pyformat": "%s", "numeric": f":{index}",
             "dollar": f"${index}"}
    if style not in forms:
        raise ValueError(f"unsupported paramstyle {style!r}")
    return forms[style]
