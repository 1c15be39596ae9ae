"""The untimed work between iterations (issue 29): drawn in bulk, yet the same plans,
keys and checks; the collector off through the whole iteration and the pre-case heap
frozen only while the case runs."""

from __future__ import annotations

import gc
import random
from collections import Counter

import pytest

from dbstand.engine import Benchmark, EngineConfig, run_benchmark
from dbstand.engine.loops import make_plan
from dbstand.errors import CaseFailed
from dbstand.targets.url import parse_target_url
from dbstand.workloads.catalog import get_stack
from dbstand.workloads.kv.keys import key_chooser
from dbstand.workloads.kv.workload import KvBenchmark, ascending, table_rows


@pytest.mark.parametrize("every", [2, 4, 10])
def test_a_sampled_plan_covers_every_argument_once_in_chunks_averaging_k(every: int) -> None:
    args = list(range(100_003))
    plan = make_plan(args, every, random.Random(1))
    assert plan.chunks is not None
    flat = [x for first, rest in plan.chunks for x in (first, *rest)]
    assert flat == args
    lengths = [1 + len(rest) for _, rest in plan.chunks]
    assert min(lengths) == 1 and max(lengths) == 2 * every - 1
    assert sum(lengths) / len(lengths) == pytest.approx(every, rel=0.03)


def test_uniform_keys_are_seeded_in_range_and_even() -> None:
    rows = 1000
    draw = key_chooser("uniform", rows, random.Random(42))
    keys = draw(200_000)
    assert keys[:50] == key_chooser("uniform", rows, random.Random(42))(50)
    assert min(keys) == 1 and max(keys) == rows
    tenths = Counter((k - 1) * 10 // rows for k in keys)
    assert all(abs(n - 20_000) < 1_000 for n in tenths.values()), tenths


def test_the_collector_is_off_for_the_whole_iteration_and_the_heap_thawed_after() -> None:
    seen: list[tuple[str, bool, int]] = []

    def make_args(i: int) -> list[int]:
        seen.append(("args", gc.isenabled(), gc.get_freeze_count()))
        return [1] * 500

    def restore(i: int, args: object) -> None:
        seen.append(("restore", gc.isenabled(), gc.get_freeze_count()))

    config = EngineConfig(revs=500, min_iterations=3, max_iterations=4, target_ci_pct=90.0)
    run_benchmark(Benchmark("noop", lambda _: None, make_args, restore), config)
    per_iteration = seen[1:]  # the first is the calibration's, before the case
    assert per_iteration and all(not enabled for _, enabled, _ in per_iteration)
    assert all(frozen > 0 for _, _, frozen in per_iteration)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_write_that_did_not_land_fails_the_names_check() -> None:
    target = parse_target_url("sqlite://")
    client = get_stack("sqlite3").for_target(target.kind).load("kv")(target, "dbstand_")
    client.connect()
    try:
        client.create_table()
        client.fill(table_rows(200))
        kv = KvBenchmark(client, "update", 200, 500, "uniform", 7)
        update = client.operation("update")
        args = kv.make_args(0)
        for params in args:
            update(params)
        kv.after_iteration(0, args)  # every write landed: passes
        args = kv.make_args(1)
        for params in args:
            update(params)
        key = args[0][1]
        update(("not written by this iteration", key))
        with pytest.raises(CaseFailed, match=f"update did not take effect: id {key}"):
            kv.after_iteration(1, args)
    finally:
        client.close()


@pytest.mark.parametrize("count", [10, 5_000, 50_000])
def test_deleted_keys_come_back_in_ascending_order(count: int) -> None:
    keys = random.Random(3).sample(range(1, 50_001), count)
    assert ascending(keys, 50_000) == sorted(keys)
