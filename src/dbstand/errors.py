"""Error hierarchy.

A `UserError` is a mistake the user can fix (bad flag, bad URL, unreachable server):
the CLI prints it as one line and exits non-zero, never with a traceback. Anything
else escaping the CLI is a bug in dbstand and keeps its traceback.
"""


class DbstandError(Exception):
    """Base class of every error dbstand raises on purpose."""


class UserError(DbstandError):
    """A mistake in what the user asked for; reported as one line, exit code 2."""

    exit_code = 2


class TargetError(UserError):
    """The target database cannot be used: unreachable, wrong password, bad URL."""


class OwnershipError(UserError):
    """dbstand was asked to touch an object it does not own."""


class MissingDependencyError(UserError):
    """A stack's driver package is not installed."""


class ServerError(UserError):
    """A managed server could not be started, found or stopped."""


class CaseFailed(DbstandError):
    """One benchmark case failed while running (the run records it and goes on)."""
