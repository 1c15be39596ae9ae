"""The HTML report in a real browser: each workload's report, from a small real run,
rendered by headless Chromium (Debian's `chromium`) into a PNG, with no console
message (the page has no scripts, so any console line is an error).

kv and batch run on SQLite; webtech runs the static-nginx stack (file and big pages: no
database). The parking report is drawn from tests/data/parking-sqlite-run.jsonl, the
results file of a short real run (three Python services on SQLite, logging off and on),
so the page does not depend on every parking service being buildable here. Set
DBSTAND_UPDATE_SCREENSHOTS=1 to copy the PNGs into docs/screenshots/.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
DATA = Path(__file__).resolve().parent / "data"
WIDTH, HEIGHT = 1280, 1600



def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def screenshot(page: Path, png: Path, tmp: Path, height: int = HEIGHT) -> list[str]:
    """Render `page` to `png`; return the page's console lines (errors, warnings...)."""
    profile = tmp / f"profile-{png.stem}"
    proc = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         f"--screenshot={png}", f"--window-size={WIDTH},{height}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines()
            if ":CONSOLE" in line or "Uncaught" in line]


def check_page(page: Path, tmp: Path, name: str, words: list[str],
               height: int = HEIGHT) -> None:
    text = page.read_text()
    assert "<script" not in text and "https://" not in text and 'src="http' not in text
    for word in words:
        assert word in text, word
    png = tmp / f"{name}.png"
    console = screenshot(page, png, tmp, height)
    assert console == [], console
    assert png_size(png) == (WIDTH, height)
    # a blank page compresses to a few KB; tables and charts make far more
    assert png.stat().st_size > 40_000, png.stat().st_size
    if os.environ.get("DBSTAND_UPDATE_SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(png, DOCS / f"{name}.png")


def test_the_console_check_catches_a_script_error(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><p>x</p><script>throw new Error('planted')</script>")
    console = screenshot(page, tmp_path / "bad.png", tmp_path)
    assert any("Uncaught Error: planted" in line for line in console)


def test_kv_report(cli, tmp_path: Path) -> None:
    out, page = tmp_path / "kv.jsonl", tmp_path / "kv.html"
    res = cli("run", "kv", "--target", f"sqlite:///{tmp_path / 'kv.db'}", "--stack",
              "sqlite3,sqlalchemy-core", "--op", "select,insert,update", "--revs", "300",
              "--rows", "500", "--min-iterations", "3", "--max-iterations", "5", "--ci", "50",
              "-o", str(out), "--export", f"html={page}")
    assert res.code == 0, res.stderr
    check_page(page, tmp_path, "kv", ["Throughput per operation", 'href="#cases"',
                                      'id="cases"', "Environment", "sqlalchemy-core"])


def test_kv_time_series_report(cli, tmp_path: Path) -> None:
    """A kv run with a time series: one chart per case (throughput, then p50/p99 on a
    log axis, warm-up shaded), axes named with units, each linked to its table row.
    The page is taller than the others so the charts are in the screenshot."""
    out, page = tmp_path / "kv.jsonl", tmp_path / "kv-time-series.html"
    res = cli("run", "kv", "--op", "select,update", "--revs", "2000", "--rows", "2000",
              "--warmup", "2", "--min-iterations", "8", "--max-iterations", "8",
              "--pause", "0.04", "--latency", "all", "--interval", "0.05", "-o", str(out),
              "--export", f"html={page}")
    assert res.code == 0, res.stderr
    check_page(page, tmp_path, "kv-time-series",
               ["Time series", "seconds since the run&#x27;s first operation",
                "operations/s", "µs (log)", "warm-up", "p50 µs", "p99 µs", "while running",
                'href="#case-0"', 'id="case-0"', 'href="#case-1"', 'id="case-1"',
                'id="series-case-1"'], height=2000)
    text = page.read_text()
    # one chart per case: its SVG has the two panels' step lines and hover boxes
    charts = re.findall(r'<figure id="series-case-\d+">(.*?)</figure>', text, re.S)
    assert len(charts) == 2
    for chart in charts:
        assert chart.count("<path ") >= 4 and "<title>" in chart
    assert "HISTFAAA" not in text  # no per-interval histogram embedded in the page


def test_batch_report(cli, tmp_path: Path) -> None:
    out, page = tmp_path / "batch.jsonl", tmp_path / "batch.html"
    res = cli("run", "batch", "--target", f"sqlite:///{tmp_path / 'b.db'}", "--rows",
              "100,200,400", "--large-rows", "400", "--warmup", "1", "--min-iterations", "2",
              "--max-iterations", "3", "--ci", "50", "-o", str(out), "--html", str(page))
    assert res.code == 0, res.stderr
    check_page(page, tmp_path, "batch", ["Rows per second at the largest size",
                                         "rows per second (higher is better)", "Environment"])


def test_parking_report(cli, tmp_path: Path) -> None:
    page = tmp_path / "parking.html"
    res = cli("report", str(DATA / "parking-sqlite-run.jsonl"), "--export", f"html={page}")
    assert res.code == 0, res.stderr
    check_page(page, tmp_path, "parking", ["Suite passes per second", "python-sqlalchemy",
                                           "latency per function", "Environment"])


def test_webtech_report(cli, tmp_path: Path) -> None:
    out, page = tmp_path / "webtech.jsonl", tmp_path / "webtech.html"
    res = cli("run", "webtech", "--stack", "static-nginx", "--test", "file,big", "--clients",
              "1,2", "--requests", "200", "--load", "seed", "--repeats", "2", "-o", str(out),
              "--export", f"html={page}")
    assert res.code == 0, res.stderr
    check_page(page, tmp_path, "webtech", ["Requests per second, clients:1",
                                           "requests per second (higher is better)"])
