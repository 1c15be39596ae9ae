"""An ab-like summary of a load run, so ab and wrk users read it at a glance.

Same headings and order as ApacheBench, including the "percentage of the
requests served within a certain time" table; times are in milliseconds with
three decimals, since answers on loopback often take well under one.
Every figure comes from the native histogram (min, mean, standard deviation,
percentiles): walking a pure-Python HDR histogram cost more CPU than the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from dbstand.loadgen.result import Counts, LoadResult

if TYPE_CHECKING:
    from rich.console import Console

AB_PERCENTILES = (50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0)


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f}"


def _line(console: Console, label: str, value: object) -> None:
    console.print(f"{label + ':':<24}{value}", markup=False, highlight=False, soft_wrap=True)


def _mode_text(r: LoadResult) -> str:
    keep = "keep-alive" if r.keepalive else "a new connection per request"
    threads = f"{r.threads} thread{'s' if r.threads != 1 else ''}"
    if r.io:
        threads += f" ({r.io})"
    if r.mode == "open":
        return (f"open loop at {r.rate:,.0f} requests/s, {r.connections} connections, "
                f"{keep}, {threads}")
    if r.mode == "scenario":
        return f"scenario, {r.connections} virtual users, {keep}, {threads}"
    if r.http2:
        keep = f"HTTP/2, {r.streams} stream{'s' if r.streams != 1 else ''} per connection"
    return f"closed loop, {r.connections} connections, {keep}, {threads}"


def _failure_detail(c: Counts) -> str:
    e = c.errors
    parts = [f"Connect: {e.connect}", f"Receive: {e.read}", f"Write: {e.write}",
             f"Timeout: {e.timeout}", f"Protocol: {e.parse}", f"Non-2xx: {c.non_2xx}"]
    if c.check_failed:
        parts.append(f"Check: {c.check_failed}")
    return "   (" + ", ".join(parts) + ")"


def print_percentile_table(c: Counts, console: Console, title: str = "") -> None:
    """ab's "Percentage of the requests served within a certain time" table."""
    hist = c.latency()
    if hist.count == 0:
        return
    console.print(f"Percentage of the requests served within a certain time (ms){title}",
                  markup=False, highlight=False)
    for p, value in zip(AB_PERCENTILES, hist.percentiles(AB_PERCENTILES), strict=True):
        console.print(f" {p:>4.0f}%  {_ms(value):>10}", markup=False, highlight=False)
    console.print(f"  100%  {_ms(hist.max()):>10} (longest request)",
                  markup=False, highlight=False)


def _connection_times(c: Counts, console: Console) -> None:
    hist = c.latency()
    if hist.count == 0:
        return
    console.print("Latency (ms)   min  mean[+/-sd]  median      max", markup=False,
                  highlight=False)
    console.print(
        f"Total:   {_ms(hist.min()):>9} {_ms(hist.mean()):>7} "
        f"{_ms(hist.stddev()):>6} {_ms(hist.percentile(50)):>8} "
        f"{_ms(hist.max()):>9}",
        markup=False, highlight=False,
    )


def _steps_table(r: LoadResult, console: Console) -> None:
    from rich.table import Table  # only scenarios need it: keep `dbstand http` light

    table = Table(title="Scenario steps (latency in ms, lower is better)", title_justify="left")
    for name in ("step", "requests", "ok", "failed", "p50", "p90", "p99", "max"):
        table.add_column(name, justify="left" if name == "step" else "right")
    for s in r.steps:
        hist = s.latency()
        has = hist.count > 0
        pct = [(_ms(v) if has else "-") for v in hist.percentiles((50, 90, 99))]
        table.add_row(s.name, str(s.requests), str(s.successes), str(s.failed), *pct,
                      _ms(hist.max()) if has else "-")
    console.print(table)
    _line(console, "Iterations", f"{r.iterations_ok} complete, {r.iterations_failed} failed")
    if r.first_check_error:
        _line(console, "First failed check", r.first_check_error)


def print_summary(r: LoadResult, console: Console | None = None) -> None:
    """Print the ab-like report of one run."""
    if console is None:
        from rich.console import Console

        console = Console()
    url = urlsplit(r.url)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    out = console
    _line(out, "Server Software", r.server or "-")
    _line(out, "Server Hostname", url.hostname or "-")
    _line(out, "Server Port", url.port or (443 if url.scheme == "https" else 80))
    out.print()
    if r.mode != "scenario":
        _line(out, "Document Path", path)
        length = "-" if r.document_length is None else f"{r.document_length} bytes"
        _line(out, "Document Length", length)
        out.print()
    _line(out, "Mode", _mode_text(r))
    _line(out, "Concurrency Level", r.connections)
    _line(out, "Time taken for tests", f"{r.elapsed_s:.3f} seconds")
    _line(out, "Complete requests", r.responses)
    _line(out, "Failed requests", r.failed)
    if r.failed:
        out.print(_failure_detail(r), markup=False, highlight=False)
    if r.non_2xx:
        _line(out, "Non-2xx responses", r.non_2xx)
    _line(out, "Keep-Alive", "yes" if r.keepalive else "no")
    _line(out, "Total transferred", f"{r.bytes} bytes")
    _line(out, "HTML transferred", f"{r.body_bytes} bytes")
    answered = max(r.responses, 1)
    _line(out, "Requests per second", f"{r.requests_per_s:.2f} [#/sec] (mean)")
    _line(out, "Successes per second", f"{r.successes_per_s:.2f} [#/sec] (2xx only)")
    if r.mode != "open":  # ab's derived figures assume a closed loop
        _line(out, "Time per request",
              f"{r.connections * r.elapsed_s * 1e3 / answered:.3f} [ms] (mean)")
        _line(out, "Time per request",
              f"{r.elapsed_s * 1e3 / answered:.3f} [ms] (mean, across all concurrent requests)")
    _line(out, "Transfer rate", f"{r.bytes_per_s / 1024:.2f} [Kbytes/sec] received")
    if r.handshakes:
        shakes = r.handshake_latency()
        p50, p99 = shakes.percentiles((50.0, 99.0))
        _line(out, "TLS handshakes",
              f"{r.handshakes} ({r.handshakes_resumed} resumed); set-up (connect + "
              f"handshake) ms: median {_ms(p50)}, p99 {_ms(p99)}, max {_ms(shakes.max())}")
    _line(out, "Generator CPU",
          f"{r.cpu_s:.3f} s ({r.requests_per_cpu_s:,.0f} requests per CPU-second)")
    if r.mode == "open":
        _line(out, "Target rate", f"{r.rate:,.1f} [#/sec]; latency counts from intended "
                                  "send times")
        if r.missed:
            _line(out, "Missed sends", f"{r.missed} (the server could not keep up)")
        if r.late_sends:
            _line(out, "Late sends", f"{r.late_sends} sent over 2 ms late by the generator "
                                     "itself (too few threads or CPU for this rate)")
    if r.status_counts:
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(r.status_counts.items()))
        _line(out, "Status codes", codes)
    out.print()
    if r.mode == "scenario":
        _steps_table(r, out)
        out.print()
    _connection_times(r, out)
    out.print()
    print_percentile_table(r, out)
