"""What every workload provides to the run machinery."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from dbstand.errors import UserError
from dbstand.targets.url import TargetURL

if TYPE_CHECKING:
    from dbstand.engine.config import EngineConfig

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Case:
    """One cell of the matrix: workload x stack x target x mode x op x parameters."""

    workload: str
    stack: str
    target: TargetURL
    mode: str
    op: str
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def label(self) -> str:
        protocol = self.params.get("protocol")
        stack = f"{self.stack}[{protocol}]" if protocol else self.stack
        return f"{self.workload} {stack} {self.op} [{self.mode}]"


@dataclass
class CaseOutcome:
    """What a workload measured for one case, ready for the results record."""

    metrics: dict[str, Any]
    server: dict[str, Any] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)


def check_known(values: Iterable[str], known: Iterable[str], what: str) -> None:
    """`unknown WHAT 'x' (known: a, b)` for the first value not in `known`."""
    names = tuple(known)
    for value in values:
        if value not in names:
            raise UserError(f"unknown {what} {value!r} (known: {', '.join(names)})")


def check_choice(values: Iterable[str], choices: Iterable[str], option: str) -> None:
    """`OPTION takes a and/or b, not 'x'` for the first value not among `choices`."""
    names = tuple(choices)
    for value in values:
        if value not in names:
            raise UserError(f"{option} takes {' and/or '.join(names)}, not {value!r}")


def prove_access(client: Any) -> None:
    """A just-opened client proved the target reachable with its credentials; check
    that dbstand may use the prefix there (ownership), then close it."""
    try:
        client.check_ownership()
    finally:
        client.close()


class Workload(ABC):
    """A kind of work (kv, batch, ...): prepares data, builds operations, verifies."""

    name: ClassVar[str]
    description: ClassVar[str]
    operations: ClassVar[tuple[str, ...]]

    @abstractmethod
    def preflight(self, cases: list[Case]) -> None:
        """Check everything a user could have got wrong, before any results file exists:
        stacks known and installed for the target, servers reachable, credentials."""

    @abstractmethod
    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        """Prepare data (untimed), measure, verify, clean up."""

    def package_versions(self, case: Case) -> dict[str, str]:
        """Versions of what the case's stack runs on, for its record (failed ones too)."""
        from dbstand.workloads.catalog import STACKS

        spec = STACKS.get(case.stack.split("+")[0].split("[")[0])
        return spec.versions() if spec is not None else {}

    def close(self) -> None:  # noqa: B027 (a hook: most workloads keep nothing)
        """Release what the workload kept between cases (a running server stack)."""
