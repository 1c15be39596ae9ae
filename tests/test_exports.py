"""Every `--export` format read back by its own tool: pyperf's compare_to and loader,
HdrHistogram's log reader (`hdrh.log`), a JSON schema of github-action-benchmark's
custom format, and Python's csv/json for the plain ones. Real runs only: kv and batch
on SQLite, `dbstand http` against a real HTTP server (Python's http.server)."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pyperf
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from dbstand.report.renderers.hdrlog import tag

FAST = ["--revs", "300", "--rows", "500", "--min-iterations", "3", "--max-iterations", "5",
        "--ci", "50"]
FORMATS = ("csv", "markdown", "json", "html", "pyperf", "hdrlog", "github-action-benchmark",
           "summary")

#: github-action-benchmark's customBiggerIsBetter input, as its README describes it
GAB_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["name", "unit", "value"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "unit": {"type": "string", "minLength": 1},
            "value": {"type": "number"},
            "range": {"type": "string"},
            "extra": {"type": "string"},
        },
    },
}


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def exports(folder: Path, stem: str) -> tuple[list[str], dict[str, Path]]:
    paths = {f: folder / f"{stem}.{f}" for f in FORMATS}
    args = [a for f, p in paths.items() for a in ("--export", f"{f}={p}")]
    return args, paths


def read_hdrlog(path: Path) -> list[HdrHistogram]:
    reader = HistogramLogReader(str(path), HdrHistogram(1, 3_600_000_000_000, 3))
    out = []
    while (histogram := reader.get_next_interval_histogram()) is not None:
        out.append(histogram)
    return out


def merge_by_tag(histograms: list[HdrHistogram]) -> dict[str, HdrHistogram]:
    """The log's intervals added up per tag (a case's, or its `.warmup`), in the order
    the tags first appear; each keeps the start of its first interval."""
    out: dict[str, HdrHistogram] = {}
    for h in histograms:
        tag_ = h.get_tag()
        if tag_ not in out:
            out[tag_] = HdrHistogram(1, 3_600_000_000_000, 3)
            out[tag_].set_start_time_stamp(h.get_start_time_stamp())
        out[tag_].add(h)
    return out


@pytest.fixture(scope="module")
def kv_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two real kv runs on in-memory SQLite, each with every export."""
    from conftest import run_cli

    folder = tmp_path_factory.mktemp("exports")
    home = {"DBSTAND_HOME": str(tmp_path_factory.mktemp("home"))}
    out: dict[str, object] = {"folder": folder}
    for stem in ("a", "b"):
        args, paths = exports(folder, stem)
        results = folder / f"{stem}.jsonl"
        res = run_cli("run", "kv", "--op", "select,update", "-o", str(results), *FAST, *args,
                      env=home)
        assert res.code == 0, res.stderr
        for f in FORMATS:
            assert f"{f}: " in res.stdout
        out[stem] = (results, paths)
    return out


def test_every_export_is_written_atomically(kv_runs) -> None:
    folder: Path = kv_runs["folder"]  # type: ignore[assignment]
    results, paths = kv_runs["a"]  # type: ignore[misc]
    for f, path in paths.items():
        assert path.stat().st_size > 0, f
        assert path.stat().st_mode & 0o044, f"{f} is not readable by others"
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    recs = cases(results)
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    assert [r["op"] for r in rows] == ["select", "update"]
    assert json.loads(paths["json"].read_text())["complete"] is True
    assert "<svg" in paths["html"].read_text()
    assert "| sqlite3 |" in paths["markdown"].read_text()
    summary = paths["summary"].read_text()
    assert summary.startswith("### dbstand kv run") and "| case | ops/s ↑ |" in summary
    assert "kv sqlite3 select [sync]" in summary and len(summary.splitlines()) < 20
    assert len(recs) == 2


def test_pyperf_reads_and_compares_the_exports(kv_runs) -> None:
    a_results, a = kv_runs["a"]  # type: ignore[misc]
    _, b = kv_runs["b"]  # type: ignore[misc]
    suite = pyperf.BenchmarkSuite.load(str(a["pyperf"]))
    assert sorted(suite.get_benchmark_names()) == ["kv sqlite3 select [sync]",
                                                   "kv sqlite3 update [sync]"]
    for rec in cases(a_results):
        bench = suite.get_benchmark(f"kv sqlite3 {rec['op']} [sync]")
        assert bench.get_unit() == "second"
        assert bench.get_nvalue() == rec["iterations"]
        # values are seconds per operation: their mean inverts to the recorded ops/s
        assert bench.mean() == pytest.approx(1 / rec["ops_per_s"], rel=0.02)
        assert bench.get_loops() == rec["revs"]
    proc = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", "--table",
                           str(a["pyperf"]), str(b["pyperf"])],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for name in suite.get_benchmark_names():  # in the table, or listed as not significant
        assert name in proc.stdout
    stats = subprocess.run([sys.executable, "-m", "pyperf", "stats", str(a["pyperf"])],
                           capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0 and "Number of benchmarks: 2" in stats.stdout


def delayed_copy(src: Path, dst: Path) -> Path:
    """A results file whose iterations each took twice the slowest one's time longer (a
    planted regression that keeps the run's own spread, so it stands out of the noise)."""
    lines = []
    for record in map(json.loads, src.read_text().splitlines()):
        if record["type"] == "case":
            times = record["iteration_s"]["all"]
            record["iteration_s"]["all"] = [t + 2 * max(times) for t in times]
            record["ops_per_s"] = record["revs"] * len(times) / sum(record["iteration_s"]["all"])
        lines.append(json.dumps(record))
    dst.write_text("\n".join(lines) + "\n")
    return dst


def test_pyperf_sees_a_planted_regression(cli, kv_runs, tmp_path: Path) -> None:
    results, paths = kv_runs["a"]  # type: ignore[misc]
    slow = delayed_copy(results, tmp_path / "slow.jsonl")
    assert cli("report", str(slow), "--export", f"pyperf={tmp_path / 'slow.json'}").code == 0
    proc = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", "--table",
                           str(paths["pyperf"]), str(tmp_path / "slow.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if "kv sqlite3" in line]
    assert len(rows) == 2 and all(re.search(r"\d\.\d\dx slower", row) for row in rows), \
        proc.stdout


def test_hdrh_log_reader_reads_every_case(kv_runs) -> None:
    results, paths = kv_runs["a"]  # type: ignore[misc]
    # one or more intervals per case (its time series); at `--latency auto` the
    # warm-up is not timed, so no `.warmup` tag
    merged = merge_by_tag(read_hdrlog(paths["hdrlog"]))
    recs = cases(results)
    assert list(merged) == [tag(f"kv sqlite3 {r['op']} [sync]") for r in recs]
    for h, rec in zip(merged.values(), recs, strict=True):
        assert h.get_total_count() == rec["latency_samples"]
        p99_us = h.get_value_at_percentile(99) / 1000
        assert p99_us == pytest.approx(rec["latency_us"]["p99"], rel=0.01)
        assert h.get_start_time_stamp() > 1.6e12  # absolute ms since the epoch


def test_hdrh_log_reader_reads_each_interval(cli, tmp_path: Path) -> None:
    """A case's time series as the log's intervals: one line per interval holding
    latencies, at its real start and length, with that interval's counts; measured
    ones under the case's tag add up to the case's histogram, warm-up under .warmup."""
    out, log = tmp_path / "r.jsonl", tmp_path / "r.hlog"
    res = cli("run", "kv", "--op", "select,update", "--revs", "300", "--rows", "500",
              "--min-iterations", "4", "--max-iterations", "4", "--pause", "0.03",
              "--interval", "0.02", "--latency", "all", "-o", str(out), "--export",
              f"hdrlog={log}")
    assert res.code == 0, res.stderr
    read = read_hdrlog(log)
    for rec in cases(out):
        name = tag(f"kv sqlite3 {rec['op']} [sync]")
        (run,) = rec["series"]["runs"]
        (origin,) = rec["series"]["started_at"]
        for phase, suffix in (("measured", ""), ("warmup", ".warmup")):
            want = [p for p in run if p["phase"] == phase and p["latency_hdr"]]
            got = [h for h in read if h.get_tag() == name + suffix]
            assert len(got) == len(want) >= 2, (phase, len(got), len(want))
            for h, p in zip(got, want, strict=True):
                assert h.get_total_count() == HdrHistogram.decode(p["latency_hdr"]) \
                    .get_total_count() > 0
                assert h.get_start_time_stamp() == pytest.approx(
                    (origin + p["t_s"]) * 1000, abs=2)
                assert h.get_end_time_stamp() - h.get_start_time_stamp() == pytest.approx(
                    p["dur_s"] * 1000, abs=2)
            total = sum(h.get_total_count() for h in got)
            expected = rec["latency_samples"] if phase == "measured" else \
                rec["warmup_iterations"] * rec["revs"]
            assert total == expected
        assert [h.get_start_time_stamp() for h in read if h.get_tag() == name] == sorted(
            h.get_start_time_stamp() for h in read if h.get_tag() == name)


def test_github_action_benchmark_matches_its_schema(kv_runs) -> None:
    results, paths = kv_runs["a"]  # type: ignore[misc]
    entries = json.loads(paths["github-action-benchmark"].read_text())
    jsonschema.validate(entries, GAB_SCHEMA)
    by_name = {e["name"]: e for e in entries}
    for rec in cases(results):
        entry = by_name[f"kv sqlite3 {rec['op']} [sync]"]
        assert entry["unit"] == "ops/s" and entry["value"] == pytest.approx(rec["ops_per_s"])
        assert re.fullmatch(r"± [0-9.e+]+", entry["range"])


def test_report_exports_an_existing_file(cli, kv_runs, tmp_path: Path) -> None:
    results, _ = kv_runs["a"]  # type: ignore[misc]
    target = tmp_path / "again.json"
    res = cli("report", str(results), "-f", "json", "--export", f"pyperf={target}")
    assert res.code == 0, res.stderr
    json.loads(res.stdout)  # stdout holds only the JSON report; the export line is on stderr
    assert "pyperf:" in res.stderr
    assert pyperf.BenchmarkSuite.load(str(target)).get_benchmark_names()


def test_bad_export_is_refused_before_the_run(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--op", "select", "-o", str(out), *FAST, "--export", "xml=a.xml")
    assert res.code == 2 and "unknown format 'xml'" in res.stderr
    assert not out.exists()
    res = cli("run", "kv", "--op", "select", "-o", str(out), *FAST, "--export", "pyperf")
    assert res.code == 2 and "FORMAT=PATH" in res.stderr


def test_batch_exports_rows_per_second(cli, tmp_path: Path) -> None:
    args, paths = exports(tmp_path, "batch")
    out = tmp_path / "b.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{tmp_path / 'b.db'}", "--api",
              "executemany", "--op", "insert", "--rows", "100,200", "--large-rows", "200",
              "--warmup", "1", "--min-iterations", "2", "--max-iterations", "3", "--ci", "50",
              "-o", str(out), *args)
    assert res.code == 0, res.stderr
    entries = json.loads(paths["github-action-benchmark"].read_text())
    jsonschema.validate(entries, GAB_SCHEMA)
    assert {e["unit"] for e in entries} == {"rows/s"}
    suite = pyperf.BenchmarkSuite.load(str(paths["pyperf"]))
    recs = {r["rows"]: r for r in cases(out) if not r.get("limit")}
    for name in suite.get_benchmark_names():
        rows = int(re.search(r" (\d+) rows", name)[1])  # type: ignore[index]
        if "limit" not in name:
            # one value per counted batch, in seconds per batch
            bench = suite.get_benchmark(name)
            assert bench.mean() == pytest.approx(recs[rows]["seconds"], rel=0.02)
    # batch times whole batches: no latency histogram, and the log says so
    assert read_hdrlog(paths["hdrlog"]) == []
    assert "No case of this run recorded a latency histogram" in paths["hdrlog"].read_text()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """Python's own http.server on a free port of 127.0.0.1, stopped afterwards."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("hello\n")
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind",
                             "127.0.0.1", "--directory", str(tmp_path / "www")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = re.search(r"port (\d+)", line)
        assert port, line
        yield f"http://127.0.0.1:{port[1]}/index.html"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_exports(cli, http_server: str, tmp_path: Path) -> None:
    args, paths = exports(tmp_path, "http")
    out = tmp_path / "h.jsonl"
    res = cli("http", http_server, "-n", "300", "-c", "2", "-o", str(out), *args)
    assert res.code == 0, res.stderr
    (rec,) = cases(out)
    (histogram,) = [h for name, h in merge_by_tag(read_hdrlog(paths["hdrlog"])).items()
                    if not name.endswith(".warmup")]
    assert histogram.get_total_count() == rec["latency_samples"] == rec["http"]["successes"]
    entries = json.loads(paths["github-action-benchmark"].read_text())
    jsonschema.validate(entries, GAB_SCHEMA)
    assert entries[0]["unit"] == "requests/s"
    bench = pyperf.BenchmarkSuite.load(str(paths["pyperf"])).get_benchmarks()[0]
    assert bench.mean() == pytest.approx(1 / rec["ops_per_s"], rel=0.01)
