"""The closed loop runs on io_uring where the kernel allows it and on epoll
(tokio) otherwise; both count the same requests the same way, and the result
and the summary say which one ran."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from dbstand.loadgen import run_closed
from dbstand.loadgen.summary import print_summary

from .conftest import Nginx, TestServer


@pytest.mark.parametrize("loop", ["uring", "epoll"])
def test_both_io_loops_count_alike(loop: str, test_server: TestServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBSTAND_LOADGEN_IO", loop)
    test_server.reset()
    r = run_closed(test_server.url(), connections=6, requests=600)
    assert r.requests == r.successes == 600
    assert test_server.stats()["requests"] == 600
    if loop == "epoll":
        assert r.io == "epoll"
    else:
        assert r.io in ("io_uring", "epoll")  # epoll where io_uring is not allowed
    for path, size in (("/chunked", 26), ("/close", len(b"until-close-body"))):
        r = run_closed(test_server.url(path), connections=2, requests=40)
        assert r.successes == 40 and r.body_bytes == 40 * size


def test_summary_names_the_io_loop_and_latency_figures(nginx: Nginx) -> None:
    r = run_closed(nginx.url(), connections=8, duration=0.5)
    assert r.successes > 0 and r.io in ("io_uring", "epoll")
    out = io.StringIO()
    print_summary(r, Console(file=out, width=120))
    text = out.getvalue()
    assert f"({r.io})" in text
    assert "Latency (ms)   min  mean[+/-sd]  median      max" in text
    lat = r.latency()
    assert f"{lat.percentile(99) / 1e6:.3f}" in text
    assert f"{lat.stddev() / 1e6:.3f}" in text
    assert r.percentiles_ms([50])[50] == lat.percentile(50) / 1e6
