"""Errors of the load engine, placed in dbstand's hierarchy.

A bad option or an unreachable target is the user's to fix, so both are
`UserError`s: the CLI prints them as one line and exits non-zero.
"""

from __future__ import annotations

from dbstand.errors import DbstandError, UserError


class LoadgenError(DbstandError):
    """Base class of the load engine's errors."""


class LoadgenConfigError(LoadgenError, UserError):
    """An option the engine refuses (malformed URL, zero connections, ...)."""


class TargetUnreachableError(LoadgenError, UserError):
    """Nothing accepts connections at the target before the run starts."""


class EngineMissingError(LoadgenError, UserError):
    """The native module was not built (dbstand installed without its extension)."""
