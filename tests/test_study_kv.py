"""`dbstand study kv --quick`, small, on the servers the study starts itself: one file
per study, so pytest-xdist's workers (--dist loadfile) run the studies side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quick_study import check_study


def test_kv_study(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dbstand.studies.kv as kv

    monkeypatch.setitem(kv.QUICK, "ops", ["select"])
    monkeypatch.setitem(kv.QUICK, "revs", 200)
    monkeypatch.setitem(kv.QUICK, "max_iterations", 4)
    monkeypatch.setitem(kv.QUICK, "asyncio_sweep", [5])
    monkeypatch.setitem(kv.QUICK, "threads_sweep", [1, 2])
    monkeypatch.setattr(kv, "ROWS", 500)
    page = check_study(cli, "kv", tmp_path)
    assert "Settings: the seed's and this run's" in page and "| write-ahead log | none | none |" \
        in page
    recs = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    cases = [r for r in recs if r["type"] == "case"]
    assert all(r["status"] == "ok" for r in cases), [r.get("error") for r in cases]
    assert {r["params"]["loop"] for r in cases if "asyncio" in r["mode"]} == {"asyncio",
                                                                              "uvloop"}
    assert all("cpu_pinning" in r["environment"]["server"] for r in cases)
    assert all(r["baseline"] == "tarantool[binary]@sync" for r in cases)
    # the sweeps the claims need ran: asyncio 1, 5, 25 and threads 1, 2, 16
    assert {r["mode"] for r in cases if r["stack"] == "asynctnt"} >= {
        "asyncio:1", "asyncio:5", "asyncio:25", "processes:2xasyncio:25"}
    assert {r["mode"] for r in cases if r["stack"] == "tarantool"} >= {
        "sync", "threads:1", "threads:2", "threads:16"}
    # select again at each RTT, blocking and with coroutines, shown beside the claims
    assert {r["params"].get("db_rtt") for r in cases} == {None, "0 ms", "0.2 ms", "1 ms"}
    assert "select on each network path" in page
    for path in ("| proxy, 0 ms |", "| 0.2 ms |", "| 1 ms |"):
        assert path in page
