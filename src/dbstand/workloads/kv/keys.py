"""Key choosers, as YCSB defines them: uniform, zipfian (scrambled) and latest."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

from dbstand.errors import UserError

DISTRIBUTIONS = ("uniform", "zipfian", "latest")
ZIPF_THETA = 0.99  # YCSB's default skew


def key_chooser(distribution: str, rows: int, rng: random.Random) -> Callable[[int], list[int]]:
    """A function drawing `n` keys from 1..rows with the given distribution.

    Uniform keys come from `choices` over the key range (one float per key, as the
    skewed ones): a fifth of `randint`'s cost, which at 50,000 keys per iteration was
    a sizeable part of the untimed time between iterations."""
    if distribution == "uniform":
        population = range(1, rows + 1)
        return lambda n: rng.choices(population, k=n)
    if distribution not in DISTRIBUTIONS:
        raise UserError(f"unknown key distribution {distribution!r} "
                        f"(known: {', '.join(DISTRIBUTIONS)})")
    weights = [1.0 / (rank ** ZIPF_THETA) for rank in range(1, rows + 1)]
    cum = list(itertools.accumulate(weights))
    ranks = range(rows)
    if distribution == "latest":
        # rank 0 is the newest key: the highest id
        keys = [rows - r for r in ranks]
    else:
        # scrambled: popular keys spread over the key space, not clustered at 1
        keys = [r + 1 for r in ranks]
        random.Random(rows).shuffle(keys)
    return lambda n: rng.choices(keys, cum_weights=cum, k=n)
