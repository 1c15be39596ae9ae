"""Scenarios: a sequence of requests per virtual user (a parking session, say),
with values captured from JSON answers and used by later steps.

Templates: `{{name}}` inserts a variable, `{{name|url}}` percent-encodes it.
Built-ins: `vu` (virtual user number), `iter` (its iteration number), `run`
(an id unique to the run) and `rand` (a fresh random number at each use).
Captures take a dotted path (`info.ticket`, `items.0.id`) or a JSON pointer
(`/info/ticket`). A step fails on a socket error, a failed
`expect`, a status other than `status` (any 2xx when None), a body without one of
`body_contains`, or a missing capture; the rest of that iteration is then skipped.
`think_ms` pauses the virtual user after a step (its iteration time includes it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbstand.loadgen.errors import LoadgenConfigError


def _pairs(value: Mapping[str, str] | Sequence[tuple[str, str]] | None) -> list[list[str]]:
    if value is None:
        return []
    items = value.items() if isinstance(value, Mapping) else value
    return [[str(k), str(v)] for k, v in items]


@dataclass(frozen=True)
class Step:
    """One request of a scenario."""

    name: str
    path: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str = ""
    captures: Mapping[str, str] = field(default_factory=dict)
    """Variable name -> JSON path in the answer."""
    expect: Mapping[str, str] = field(default_factory=dict)
    """JSON path -> expected value (compared as text)."""
    status: int | None = None
    """The status the answer must have (None: any 2xx)."""
    body_contains: Sequence[str] = ()
    """Texts the answer's body must contain."""
    think_ms: float = 0.0
    """The virtual user's pause after this step, in milliseconds."""

    def to_native(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "body_contains": list(self.body_contains),
            "think_ms": float(self.think_ms),
            "name": self.name,
            "method": self.method.upper(),
            "path": self.path,
            "headers": _pairs(self.headers),
            "body": self.body,
            "captures": _pairs(self.captures),
            "expect": _pairs(self.expect),
        }


@dataclass(frozen=True)
class Scenario:
    """Steps run in order by every virtual user, plus constant variables."""

    steps: Sequence[Step]
    vars: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        """The engine's input format (checked again, in full, by the engine)."""
        return json.dumps({"steps": [s.to_native() for s in self.steps],
                           "vars": _pairs(self.vars)})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Build from plain data (a TOML or JSON experiment file)."""
        try:
            steps = [Step(**dict(s)) for s in data["steps"]]
        except (KeyError, TypeError) as e:
            raise LoadgenConfigError(f"bad scenario: {e}") from None
        return cls(steps=steps, vars=dict(data.get("vars", {})))
