"""How a load is cut into per-worker shares (pure arithmetic, no Dask).

Connections (or clients) are dealt out as evenly as whole numbers allow; anything
that goes with connections (requests to send, an open loop's rate) follows each
worker's share of them, so every connection does the same work wherever it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbstand.errors import UserError


def even(total: int, parts: int, what: str) -> list[int]:
    """`total` dealt to `parts` workers, the first ones one more when it does not divide;
    every worker gets at least one (an idle worker would make a partial set look whole)."""
    if total < parts:
        raise UserError(f"{what} ({total}) cannot be shared by {parts} cluster workers: "
                        f"give at least {parts}, or use fewer workers")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def proportional(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights`, whole numbers summing to `total`
    (largest remainders get the leftovers)."""
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    out = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def deal(args: Sequence[Any], shares: Sequence[int]) -> list[list[Any]]:
    """Per-worker slices of one iteration's arguments: argument j goes to client slot
    j mod C (C = all clients), and a worker gets the slots of its clients, so each client
    does R/C operations on the same mix of keys as in one process."""
    owner = [w for w, n in enumerate(shares) for _ in range(n)]
    out: list[list[Any]] = [[] for _ in shares]
    slots = len(owner)
    for j, arg in enumerate(args):
        out[owner[j % slots]].append(arg)
    return out
