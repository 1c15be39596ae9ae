"""The untimed admin connection to a target: the first installed of its kind's admin
stacks (targets/<kind>/kind.py), through that stack's kv client, so counters and
checks reuse the measured drivers' own connect code."""

from __future__ import annotations

from typing import Any

from dbstand.errors import MissingDependencyError
from dbstand.stacks.catalog import get_stack
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL


def admin_client(target: TargetURL, prefix: str) -> Any:
    """A connected kv client of the first installed admin stack (caller closes it)."""
    kind = get_kind(target.kind)
    for name in kind.admin_stacks:
        spec = get_stack(name)
        if spec.installed:
            client = spec.load("kv")(target, prefix)
            client.connect()
            return client
    raise MissingDependencyError(f"no driver installed to reach {target.redacted()} "
                                 f"(any of {', '.join(kind.admin_stacks) or 'none'})")
