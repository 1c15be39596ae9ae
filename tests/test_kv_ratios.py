"""kv's study ratios, --baseline, the event loop as an axis, CPU pinning, bimodal cases
and the sweep verdict: the logic on known numbers, the run on a real Tarantool."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import psutil
import pytest

from dbstand.engine.stats import find_bimodal
from dbstand.modes.pinning import ALONE, DEFAULT_PLACEMENT, cpus_for, pinned
from dbstand.targets.managed import ServerRecord
from dbstand.workloads.kv.table import BaselineSpec, Point, judge_sweep

FAST = ["--revs", "300", "--rows", "400", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50", "--no-probes"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


# --- bimodal --------------------------------------------------------------------------
def test_two_clusters_are_bimodal_with_modes_and_shares() -> None:
    rng = random.Random(3)
    times = [rng.gauss(0.10, 0.002) for _ in range(14)] + \
        [rng.gauss(0.25, 0.004) for _ in range(6)]
    rng.shuffle(times)
    b = find_bimodal(times)
    assert b is not None
    record = b.as_dict(revs=1000)
    fast, slow = record["modes"]
    assert fast["share"] == pytest.approx(0.7) and slow["share"] == pytest.approx(0.3)
    assert fast["ops_per_s"] == pytest.approx(10_000, rel=0.03)
    assert slow["ops_per_s"] == pytest.approx(4_000, rel=0.03)
    assert record["separation_sd"] > 6


@pytest.mark.parametrize("draw", [
    lambda rng: rng.gauss(1, 0.05), lambda rng: rng.lognormvariate(0, 0.4),
    lambda rng: rng.uniform(1, 2), lambda rng: 1 + rng.expovariate(3)])
def test_one_humped_samples_are_rarely_bimodal(draw) -> None:
    rng = random.Random(11)
    flagged = sum(find_bimodal([draw(rng) for _ in range(20)]) is not None
                  for _ in range(200))
    assert flagged <= 10  # under 5% (simulated: about 1-2%)


def test_small_or_lopsided_samples_are_not_bimodal() -> None:
    assert find_bimodal([1.0, 1.0, 2.0, 2.0, 1.0, 2.0]) is None      # too few iterations
    assert find_bimodal([1.0] * 18 + [3.0] * 2) is None                # a 10% cluster


# --- the sweep verdict ----------------------------------------------------------------
def test_sweep_names_an_optimum_only_beyond_the_neighbours() -> None:
    clear = [Point(1, 100, 2, False), Point(5, 300, 2, False), Point(25, 500, 2, False),
             Point(50, 350, 2, False)]
    assert judge_sweep(clear, "asyncio:")["optimum"] == "asyncio:25"
    flat = [Point(1, 100, 2, False), Point(10, 480, 3, False), Point(25, 495, 3, False),
            Point(50, 490, 3, False), Point(100, 300, 3, False)]
    verdict = judge_sweep(flat, "asyncio:")
    assert verdict["optimum"] is None and verdict["plateau"] == "asyncio:10-50"
    assert "plateau asyncio:10-50 within 3%" in verdict["verdict"]


def test_an_unstable_point_is_never_the_optimum() -> None:
    points = [Point(1, 100, 2, False), Point(5, 300, 2, False), Point(25, 900, 40, True)]
    verdict = judge_sweep(points, "asyncio:")
    assert verdict["optimum"] != "asyncio:25"
    assert judge_sweep([Point(1, 1, 50, True), Point(2, 2, 50, True)], "threads:")[
        "verdict"].startswith("no optimum")


def test_baseline_spec() -> None:
    spec = BaselineSpec.parse("asynctnt[sql]@asyncio:25@uvloop")
    record = {"stack": "asynctnt", "params": {"protocol": "sql", "loop": "uvloop"},
              "mode": "asyncio:25"}
    assert spec.matches(record)
    assert not spec.matches({**record, "params": {"protocol": "sql", "loop": "asyncio"}})
    assert BaselineSpec.parse("psycopg").matches({"stack": "psycopg", "mode": "sync"})
    with pytest.raises(ValueError):
        BaselineSpec.parse("@sync")


# --- pinning ----------------------------------------------------------------------------
def _affinity_of_tree(pid: int) -> set[frozenset[int]]:
    root = psutil.Process(pid)
    masks = set()
    for proc in [root, *root.children(recursive=True)]:
        for thread in proc.threads():
            masks.add(frozenset(os.sched_getaffinity(thread.id)))
    return masks


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_pinning_moves_both_trees_and_puts_them_back(tarantool_srv: ServerRecord) -> None:
    mine, server = set(os.sched_getaffinity(0)), _affinity_of_tree(tarantool_srv.pid)
    with pinned(tarantool_srv.pid, True, placement="separate") as pins:
        record = pins.record()
        assert record["enabled"] and record["threads"]["database"] >= 2  # tarantool is threaded
        assert os.sched_getaffinity(0) == set(record["client_cpus"])
        assert _affinity_of_tree(tarantool_srv.pid) == {frozenset(record["server_cpus"])}
        assert record["client_cpus"] != record["server_cpus"]
    assert set(os.sched_getaffinity(0)) == mine
    assert _affinity_of_tree(tarantool_srv.pid) == server
    with pinned(tarantool_srv.pid, False) as off:
        assert off.record() == {"enabled": False, "reason": "off (--no-pin)"}
    with pinned(tarantool_srv.pid, True, placement="same") as same:
        record = same.record()
        assert record["placement"] == "same"
        assert record["client_cpus"] == record["server_cpus"]
        assert _affinity_of_tree(tarantool_srv.pid) == {frozenset(record["server_cpus"])}
    assert _affinity_of_tree(tarantool_srv.pid) == server


# --- the run --------------------------------------------------------------------------
def test_loops_baseline_ratios_and_pinning_in_a_run(cli, tarantool_url: str,
                                                     tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    before = set(os.sched_getaffinity(0))
    res = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool,asynctnt",
              "--op", "select", "--mode", "sync,threads:2,asyncio:1,2",
              "--loop", "asyncio,uvloop", "--baseline", "tarantool[binary]@sync",
              "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    assert set(os.sched_getaffinity(0)) == before
    recs = cases(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    # one case per loop for the asyncio stack, none for the synchronous one
    loops = {(r["stack"], r["mode"], r["params"]["protocol"], r["params"]["loop"])
             for r in recs}
    for mode in ("asyncio:1", "asyncio:2"):
        for protocol in ("binary", "sql"):
            assert {("asynctnt", mode, protocol, loop) for loop in ("asyncio", "uvloop")} <= loops
    assert sum(1 for r in recs if r["stack"] == "tarantool") == 4
    assert all(r["baseline"] == "tarantool[binary]@sync" for r in recs)
    # one placement for every case of the table, one-at-a-time and concurrent alike:
    # the table's (client and database where modes/pinning.py puts them)
    placements = set()
    for r in recs:
        pin = r["environment"]["server"]["cpu_pinning"]
        if len(before) >= 2:
            assert pin["enabled"] and pin["placement"] == DEFAULT_PLACEMENT, (r["mode"], pin)
            assert pin["client_cpus"] == cpus_for("client"), pin
            assert pin["server_cpus"] == cpus_for("database"), pin
            placements.add((tuple(pin["client_cpus"]), tuple(pin["server_cpus"])))
        # a warm-up that went on until two iterations agreed (at least 2)
        assert r["warmup_iterations"] >= 2, r["warmup_iterations"]
    assert len(placements) <= 1, placements
    assert "vs baseline" in res.stdout and "loop" in res.stdout
    assert "vs baseline: ops/s over tarantool[binary] sync" in res.stdout
    payload = json.loads(cli("report", str(out), "-f", "json").stdout)
    kinds = {(r["connector"], r["kind"], r["what"]) for r in payload["ratios"]}
    assert ("asynctnt[binary]", "coroutines", "asyncio:2 / asyncio:1") in kinds
    assert ("tarantool[binary]", "threads", "threads:2 / sync") in kinds
    assert ("tarantool", "protocol", "sql / binary at sync") in kinds
    assert ("asynctnt[sql]", "loop", "uvloop / asyncio at asyncio:2") in kinds
    base = [row for row in payload["rows"] if row["stack"] == "tarantool[binary]"
            and row["mode"] == "sync"]
    assert base and base[0]["vs_baseline"] == 1.0
    md = cli("report", str(out), "-f", "markdown").stdout
    assert "Ratios within this run" in md and "asyncio:2 / asyncio:1" in md


def test_no_pin_and_a_bad_baseline(cli, tarantool_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool", "--op",
              "select", "--no-pin", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    (rec,) = [r for r in cases(out) if r["params"]["protocol"] == "binary"]
    assert rec["environment"]["server"]["cpu_pinning"] == {"enabled": False,
                                                           "reason": "off (--no-pin)"}
    same = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool", "--op",
               "select", "--protocol", "binary", "--pin-cpus", "same", "-o",
               str(tmp_path / "s.jsonl"), *FAST)
    assert same.code == 0, same.stderr
    (rec,) = cases(tmp_path / "s.jsonl")
    pin = rec["environment"]["server"]["cpu_pinning"]
    if len(os.sched_getaffinity(0)) >= 2:
        assert pin["placement"] == "same" and pin["client_cpus"] == pin["server_cpus"]
    assert cli("run", "kv", "--target", tarantool_url, "--pin-cpus", "other",
               "-o", str(tmp_path / "z.jsonl"), *FAST).code == 2
    bad = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool",
              "--baseline", "a@b@c@d", "-o", str(tmp_path / "x.jsonl"), *FAST)
    assert bad.code == 2 and "--baseline takes STACK[@MODE][@LOOP]" in bad.stderr
    assert not (tmp_path / "x.jsonl").exists()
    loop = cli("run", "kv", "--target", tarantool_url, "--stack", "asynctnt", "--mode",
               "asyncio:1", "--loop", "trio", "-o", str(tmp_path / "y.jsonl"), *FAST)
    assert loop.code == 2 and "--loop takes asyncio and/or uvloop" in loop.stderr


def test_a_bimodal_record_shows_both_modes(cli, tarantool_url: str, tmp_path: Path) -> None:
    """A case the engine found bimodal: the table and notes give both modes with their
    shares, never the mean alone (the record is a real run's, with its iterations
    replaced by two clusters as a scheduler can make them)."""
    from dbstand.results.store import read_results
    from dbstand.workloads.render import build_report

    out = tmp_path / "r.jsonl"
    assert cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool", "--protocol",
               "binary", "--op", "select", "-o", str(out), *FAST).code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    times = [0.03] * 7 + [0.09] * 3
    b = find_bimodal([t + 0.0001 * i for i, t in enumerate(times)])
    assert b is not None
    for record in lines:
        if record["type"] == "case":
            record["bimodal"] = b.as_dict(record["revs"])
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = build_report(read_results(out))
    (row,) = report.tables()[0].rows
    assert row["ops_per_s"].startswith("BIMODAL ") and "(70%)" in row["ops_per_s"]
    assert "(30%)" in row["ops_per_s"] and "BIMODAL" in row["note"]
    assert any(n.startswith("BIMODAL tarantool[binary] sync select") for n in report.notes)


def test_one_placement_table_for_every_role() -> None:
    """kv's client and database, a served stack and the later tiers all ask the one
    table (docs/placement.md: client, stack and database on one CPU; a profiler on
    another); the candidates measured against it stay selectable."""
    from dbstand.modes.pinning import ROLES

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        assert cpus_for("client") is None
        return
    client = cpus_for("client")
    assert client == cpus_for("stack") == cpus_for("database") == cpus_for("proxy")
    assert not set(cpus_for("profiler") or []) & set(client)
    assert set(ROLES) == {"client", "stack", "database", "proxy", "profiler"}
    apart = cpus_for("database", "separate")
    assert apart and not set(apart) & set(cpus_for("client", "separate") or [])
    with pytest.raises(ValueError):
        cpus_for("generator")
    # no server process here (embedded, remote): nothing to place, the client stays free
    before = os.sched_getaffinity(0)
    with pinned(None, True) as alone:
        assert os.sched_getaffinity(0) == before
    assert alone.record() == {"enabled": False, "reason": ALONE}
