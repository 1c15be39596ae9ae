"""The suite's fresh identities are fresh for the whole run, by construction: a study
keeps one set of tables for thousands of passes, and a reused user starts with an
earlier pass's balance (the parking study of 2026-11-27 failed once that way)."""

from __future__ import annotations

import multiprocessing
import random
import threading
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.queues import Queue

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking.app import running_service
from dbstand.workloads.parking.suite import ParkingClient, ids, run_pass

THREADS, EACH = 8, 500


def _draw(seed: int, n: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)  # the same seed everywhere: the random head repeats
    return [(ids.user_id(rng), ids.plate(rng), ids.txid(rng)) for _ in range(n)]


def _draw_in(queue: Queue[list[tuple[str, str, str]]], seed: int, n: int) -> None:
    queue.put(_draw(seed, n))


def _drawn_by_child(ctx: ForkContext | SpawnContext) -> list[tuple[str, str, str]]:
    queue: Queue[list[tuple[str, str, str]]] = ctx.Queue()
    child = ctx.Process(target=_draw_in, args=(queue, 0, EACH))
    child.start()
    got = queue.get(timeout=60)
    child.join(60)
    assert child.exitcode == 0, ctx.get_start_method()
    return got


def test_ids_are_unique_across_threads_and_processes() -> None:
    drawn: list[tuple[str, str, str]] = _draw(0, EACH)   # the parent first: a fork inherits
    lock = threading.Lock()

    def worker() -> None:
        got = _draw(0, EACH)
        with lock:
            drawn.extend(got)

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # a forked child starts with the parent's counter state; a spawned one afresh
    drawn.extend(_drawn_by_child(multiprocessing.get_context("fork")))
    drawn.extend(_drawn_by_child(multiprocessing.get_context("spawn")))
    assert len(drawn) == (THREADS + 3) * EACH
    users, plates, txids = (set(column) for column in zip(*drawn, strict=True))
    assert len(users) == len(plates) == len(txids) == len(drawn)
    assert all(u.isdigit() and len(u) <= 64 for u in users)   # user_eid is str:64
    assert all(len(p) <= 32 for p in plates)                    # plate_number is str:32
    assert all(4 <= len(t) <= 64 for t in txids)                # the spec's transaction_id


def test_a_pass_repeated_with_the_same_rng_meets_no_earlier_user(mariadb_url: str) -> None:
    """Two passes from identically seeded rngs: with drawn ids the second pass reuses
    the first one's users, plates and transactions (its refunds user starts at 38.25),
    which is what a chance collision did in the study; with serial ids both pass."""
    with running_service("python-raw", parse_target_url(mariadb_url)) as service:
        client = ParkingClient(service.base_url)
        try:
            for _ in range(2):
                report = run_pass(client, random.Random(2026), keep_going=True)
                assert report.ok, [str(f) for f in report.failures]
        finally:
            client.close()
