"""`--protocol`: one case per wire protocol, for the stacks that offer several.

A stack that declares protocols (`tarantool`: binary, sql; `pgbench`: simple,
prepared; `mysql-connector-python`: text, prepared) runs each protocol asked for, or
all of its protocols when none is asked for; other stacks are unaffected. A stack
typed with its protocol (`tarantool[sql]`) keeps it. The protocol is recorded in
each case's params (`protocol`) and shown in tables as `stack[protocol]`.
"""

from __future__ import annotations

from dataclasses import replace

from dbstand.errors import UserError
from dbstand.workloads.base import Case
from dbstand.workloads.catalog import get_stack


def expand_protocols(cases: list[Case], asked: list[str]) -> list[Case]:
    """Each case once per protocol of its stack; `asked` empty means all of them."""
    offered: dict[str, tuple[str, ...]] = {}
    out: list[Case] = []
    for case in cases:
        spec = get_stack(case.stack)
        if spec.protocol is not None:  # typed as stack[protocol]
            base = case.stack.split("[", 1)[0]
            out.append(replace(case, stack=base,
                               params={**case.params, "protocol": spec.protocol}))
            continue
        if not spec.protocols:
            out.append(case)
            continue
        offered[spec.name] = spec.protocols
        chosen = [p for p in asked if p in spec.protocols] if asked else list(spec.protocols)
        if not chosen:
            raise UserError(f"stack {case.stack!r} offers protocols "
                            f"{', '.join(spec.protocols)}; --protocol asked for "
                            f"{', '.join(asked)}")
        out.extend(replace(case, params={**case.params, "protocol": p}) for p in chosen)
    for protocol in asked:
        if not any(protocol in protocols for protocols in offered.values()):
            have = "; ".join(f"{name}: {', '.join(p)}" for name, p in offered.items())
            raise UserError(f"--protocol {protocol!r}: no chosen stack offers it"
                            + (f" ({have})" if have else " (none of them has protocols)"))
    return out


def with_probes(cases: list[Case], probes: bool) -> list[Case]:
    """Record whether probes run (`--no-probes` turns them off) in each case's params."""
    return [replace(case, params={**case.params, "probes": probes}) for case in cases]
