"""--profile on real stacks: a CPython one (py-spy), a Go one (perf, frame pointers) and a
JVM (perf through its frame pointers, named by its perf map), each with MariaDB (perf,
DWARF) under a brief load; folded stacks, inferno's flame graphs, their shares, the
overhead ratio, the cost breakdown and the one-line missing-profiler error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dbstand.modes.pinning import cpus_for
from dbstand.profiles import folded, launch_env, perf_map
from dbstand.profiles.session import profiling
from dbstand.report.breakdown import bar_text, tiers_of
from dbstand.report.model import Table, case_key

PREFIX = "dbstand_prof_"


@pytest.fixture(scope="module")
def profiled(mariadb_url: str, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, str, list[dict[str, Any]]]:
    from conftest import run_cli_in_process

    out = tmp_path_factory.mktemp("profiles") / "p.jsonl"
    home = {"DBSTAND_HOME": str(tmp_path_factory.mktemp("home"))}
    res = run_cli_in_process("run", "webtech", "--stack",
                             "python-flask-gunicorn,go-nethttp,java-tomcat-servlet",
                             "--test", "db", "--clients", "2", "--requests", "100000",
                             "--duration", "1", "--repeats", "2", "--load", "seed",
                             "--target", mariadb_url, "--prefix", PREFIX, "--profile",
                             "-o", str(out), "--html", str(out.with_suffix(".html")),
                             env=home)
    assert res.code == 0, res.stderr + res.stdout
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return out, res.stdout, [r for r in records if r["type"] == "case"]


def _stacks(out: Path, record: dict[str, Any], tier: str) -> Any:
    info = record["profile"]["tiers"][tier]
    assert (out.parent / info["svg"]).read_text().startswith("<?xml"), info
    return folded.read(out.parent / info["folded"]), info


@pytest.mark.parametrize(("stack", "profiler", "own", "least"), [
    ("python-flask-gunicorn", "py-spy", "db (app.py", 0.05),   # the Flask view function
    ("go-nethttp", "perf-fp", "main.", 0.05),                   # the Go program's own functions
    # the servlet class: in a run this short the JVM's JIT compiler threads take most
    # samples (one make test read 3.6% for the servlet, with C2 on top)
    ("java-tomcat-servlet", "perf-java", "dbstand.webtech.Webtech$", 0.01),
])
def test_the_app_stack_is_profiled_by_its_runtime_s_profiler(
        profiled: tuple[Path, str, list[dict[str, Any]]], stack: str, profiler: str,
        own: str, least: float) -> None:
    out, stdout, cases = profiled
    record = next(r for r in cases if r["stack"] == stack)
    assert record["status"] == "ok" and record["params"]["profile"] is True
    stacks, info = _stacks(out, record, "app")
    assert info["profilers"] == [profiler] and info["samples"] > 20
    assert folded.share_of(stacks, own) > least, info["top_frames"]
    # the ratio is the profiled run's rate over the unprofiled run's, both recorded (a
    # bound on its value would be a timing test: under the suite's load a one-second
    # unprofiled run read 2.1x slower than the profiled one after it)
    profile = record["profile"]
    assert profile["unprofiled_ops_per_s"] > 0 and profile["overhead_ratio"] > 0
    assert profile["overhead_ratio"] == round(
        record["ops_per_s"] / profile["unprofiled_ops_per_s"], 3)
    assert f"unprofiled (x{profile['overhead_ratio']:.3f})" in stdout
    assert f"profiled webtech {stack} /db" in stdout
    # the profilers ran where the placement table puts them, apart from what they measured
    where = cpus_for("profiler")
    if where is not None:
        assert record["placement"]["cpus"]["profiler"] == where
        assert info["profiler_cpus"] == where
        assert not set(where) & set(record["placement"]["cpus"]["stack"])


def test_mariadb_s_query_execution_is_named(
        profiled: tuple[Path, str, list[dict[str, Any]]]) -> None:
    out, _, cases = profiled
    stacks, info = _stacks(out, cases[0], "database")
    assert info["profilers"] == ["perf"]
    assert folded.share_of(stacks, "dispatch_command") > 0.2, info["top_frames"]


def test_breakdown_tiers_and_report(profiled: tuple[Path, str, list[dict[str, Any]]]) -> None:
    out, stdout, cases = profiled
    tiers = tiers_of(cases[0])
    assert {"generator", "app", "database", "profiler"} <= set(tiers)
    assert all(us > 0 and 0 < share < 1.5 for us, share in tiers.values())
    assert "Cost breakdown" in stdout and "[profiled]" in stdout
    html = out.with_suffix(".html").read_text()
    assert 'href="p.profiles/case-0/app.svg"' in html
    assert "Share of the machine&#x27;s CPU by tier" in html


def test_jfr_s_threads_move_from_the_app_tier_to_the_profiler_s() -> None:
    base = {"status": "ok", "ops_per_s": 100.0, "successes": 1000, "generator_cpu_s": 1.0,
            "app_cpu_us_per_req": 4000.0, "db_cpu_us_per_req": 1000.0,
            "environment": {"cpu_logical": 2}}
    tier = {"profiler_cpu_s": 2.0, "profiler_cpu_inside_s": 2.0, "profiled_s": 10.0}
    tiers = tiers_of({**base, "profile": {"tiers": {"app": tier}}})
    # 2 s of JFR over 10 s on 2 CPUs at 100 req/s: 10% of the machine, 2000 µs a request
    assert tiers["profiler"] == pytest.approx((2000.0, 0.1))
    assert tiers["app"] == pytest.approx((2000.0, 0.1))   # 4000 µs, less JFR's 2000
    assert tiers_of(base)["app"] == pytest.approx((4000.0, 0.2))


def test_a_profiled_case_never_matches_an_unprofiled_one(
        profiled: tuple[Path, str, list[dict[str, Any]]]) -> None:
    record = profiled[2][0]
    plain = {**record, "params": {k: v for k, v in record["params"].items()
                                  if k != "profile"}}
    assert case_key(record) != case_key(plain)


def test_bar_text_fills_by_share_and_never_overflows() -> None:
    assert bar_text([("app", 0.5), ("database", 0.25)], width=8) == "▓▓▓▓▒▒··"
    assert bar_text([("app", 0.9), ("database", 0.9)], width=10) == "▓" * 9 + "▒"


def test_a_missing_profiler_is_one_line(cli_process: Callable[..., Any],
                                         tmp_path: Path) -> None:
    res = cli_process("run", "kv", "--op", "select", "--profile", "-o",
                      str(tmp_path / "r.jsonl"), env={"PATH": str(tmp_path)})
    assert res.code == 2
    assert res.stderr.strip().count("\n") == 0 and "linux-perf" in res.stderr, res.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_profile_needs_the_probes(cli: Callable[..., Any], tmp_path: Path) -> None:
    res = cli("run", "kv", "--profile", "--no-probes", "-o", str(tmp_path / "r.jsonl"))
    assert res.code == 2 and "drop --no-probes" in res.stderr
    assert not (tmp_path / "r.jsonl").exists()


BUSY_JAVA = """
public class Busy {
    static long spin(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * 31 % 7; return s; }
    public static void main(String[] a) {
        long end = System.nanoTime() + 30_000_000_000L, s = 0;
        while (System.nanoTime() < end) s += spin(1_000_000);
        System.out.println(s);
    }
}
"""


def test_a_jvm_s_java_is_named_and_its_profilers_run_on_the_profiler_s_cpus(
        tmp_path: Path) -> None:
    """A real JVM, started as a profiled stack is (frame pointers kept), and a real
    CPython child, each given its profiler by a session the placement table placed:
    perf and py-spy run on the profiler's CPUs, this thread keeps its own, and perf's
    stacks go through the JIT's code, named by the perf map the JVM writes at the end."""
    import os
    import subprocess
    import time

    import psutil

    where = cpus_for("profiler")
    if where is None:
        pytest.fail("this test needs two CPUs (the placement table places nothing on one)")
    source = tmp_path / "Busy.java"
    source.write_text(BUSY_JAVA)
    java = subprocess.Popen(["java", str(source)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, **launch_env(True)})
    python = subprocess.Popen(["python3", "-c", "import time; time.sleep(60)"])
    mine = os.sched_getaffinity(0)
    try:
        deadline = time.monotonic() + 60
        while not any("Busy" in a for a in psutil.Process(java.pid).cmdline()) or \
                psutil.Process(java.pid).cpu_times().user < 1.0:   # compiled and running
            assert time.monotonic() < deadline and java.poll() is None
            time.sleep(0.2)
        with profiling(tmp_path / "p") as session:
            session.place(where)
            session.attach("app", java.pid)
            session.attach("client", python.pid)
            assert os.sched_getaffinity(0) == mine
            for run in session.running:
                assert run.proc is not None
                assert psutil.Process(run.proc.pid).cpu_affinity() == where, run.kind
            time.sleep(2)
            session.stop()
        app = session.tiers["app"]
        assert app["profilers"] == ["perf-java"] and app["profiler_cpus"] == where, app
        assert app["samples"] > 200 and app["profiler_cpu_s"] > 0, app
        stacks = folded.read(Path(app["folded"]))
        assert folded.share_of(stacks, "Busy.spin") > 0.5, app["top_frames"]
        assert app["unknown_share"] < 0.05, app
    finally:
        for proc in (java, python):
            proc.kill()
            proc.wait()
        perf_map(java.pid).unlink(missing_ok=True)


def test_the_breakdown_shows_what_a_stack_adds_on_the_client() -> None:
    from dbstand.report.breakdown import section

    def kv(stack: str, client_s: float) -> dict[str, Any]:
        return {"type": "case", "status": "ok", "workload": "kv", "stack": stack,
                "op": "select", "mode": "sync", "target": "postgresql://x", "ops_per_s": 1000.0,
                "params": {"rows": 10}, "environment": {"cpu_logical": 2},
                "probes": {"window_s": 1.0, "ops": 1000, "client_cpu_s": client_s,
                           "server_cpu_s": 0.02, "cores": 2}}

    records = [kv("psycopg", 0.04), kv("sqlalchemy-orm", 0.65),
               {**kv("pg8000", 0.05), "op": "update"}]   # other work: no comparison
    found = section(records)
    assert found is not None and isinstance(found.blocks[0], Table)
    rows = found.blocks[0].rows
    assert [r.get("client_extra") for r in rows] == ["+0.0", "+610.0", None]
