"""--profile on real stacks: a CPython one (py-spy) and a native one (perf, DWARF), each
with MariaDB (perf) under a brief load; folded stacks, inferno's flame graphs, their
shares, the overhead ratio, the cost breakdown and the one-line missing-profiler error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dbstand.profiles import folded, tools
from dbstand.report.breakdown import bar_text, tiers_of
from dbstand.report.model import case_key

PREFIX = "dbstand_prof_"


@pytest.fixture(scope="module")
def profiled(mariadb_url: str, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, str, list[dict[str, Any]]]:
    from conftest import run_cli_in_process

    out = tmp_path_factory.mktemp("profiles") / "p.jsonl"
    home = {"DBSTAND_HOME": str(tmp_path_factory.mktemp("home"))}
    res = run_cli_in_process("run", "webtech", "--stack", "python-flask-gunicorn,go-nethttp",
                             "--test", "db", "--clients", "2", "--requests", "100000",
                             "--duration", "1.5", "--repeats", "2", "--load", "seed",
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


@pytest.mark.parametrize(("stack", "profiler", "own"), [
    ("python-flask-gunicorn", "py-spy", "db (app.py"),   # the Flask view function
    ("go-nethttp", "perf-fp", "main."),                   # the Go program's own functions
])
def test_the_app_stack_is_profiled_by_its_runtime_s_profiler(
        profiled: tuple[Path, str, list[dict[str, Any]]], stack: str, profiler: str,
        own: str) -> None:
    out, stdout, cases = profiled
    record = next(r for r in cases if r["stack"] == stack)
    assert record["status"] == "ok" and record["params"]["profile"] is True
    stacks, info = _stacks(out, record, "app")
    assert info["profilers"] == [profiler] and info["samples"] > 20
    assert folded.share_of(stacks, own) > 0.05, info["top_frames"]
    assert 0 < record["profile"]["overhead_ratio"] < 2
    assert f"profiled webtech {stack} /db" in stdout


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
        long end = System.nanoTime() + 1_000_000_000L, s = 0;
        while (System.nanoTime() < end) s += spin(1_000_000);
        System.out.println(s);
    }
}
"""


def test_jfr_execution_samples_fold_into_named_java_frames(tmp_path: Path) -> None:
    """A real JVM recorded by JDK Flight Recorder for a second: its hot method leads."""
    import subprocess

    source, recording = tmp_path / "Busy.java", tmp_path / "busy.jfr"
    source.write_text(BUSY_JAVA)
    subprocess.run(["java", f"-XX:StartFlightRecording=filename={recording},settings=profile",
                    str(source)], check=True, capture_output=True, timeout=120)
    _, jfr = tools.jcmd()
    stacks = folded.from_jfr(folded.jfr_json(jfr, recording), "java")
    assert sum(stacks.values()) > 20
    assert all(s.startswith("java;") for s in stacks)
    assert folded.share_of(stacks, "Busy.spin") > 0.3, folded.summary(stacks)["top_frames"]
