"""What a workload served over HTTP (parking, webtech, docquery) gives the shared
launch -> verify -> load path: how to prepare the database, where its static files
are, and how to verify a running stack's answers. The launcher and the load engine
are the same for all of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbstand.stacks.launcher import StackHandle
    from dbstand.targets.url import TargetURL


@dataclass(frozen=True)
class Check:
    """One verification verdict: a test (or scenario) of a stack, ok or why not."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class ServedWorkload:
    name: str
    #: create (or reuse) the data the stacks read; (target, prefix)
    prepare: Callable[[TargetURL, str], None]
    #: check a running stack's answers before it is measured
    verify: Callable[[StackHandle, TargetURL | None, str], list[Check]]
    static_dir: Path | None = None
    needs_target: bool = True


def failures(checks: list[Check]) -> str:
    """The failed checks as one line ("" when all passed)."""
    return "; ".join(f"{c.name}: {c.detail}" for c in checks if not c.ok)
