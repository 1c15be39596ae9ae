"""`dbstand http URL`: ab/wrk-style load test with the native engine.

ab's flags (-n, -c, -k, -t, -s, -H, -p, -T, -m) and wrk's (-d, --rate) mean
what they mean there, with one deliberate difference: keep-alive is on unless
--no-keepalive is given (dbstand's methodology), so -k is accepted and changes
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dbstand.console import console, err_console
from dbstand.distributed.cli import ClusterOption, http_on_cluster, print_cluster
from dbstand.errors import UserError
from dbstand.loadgen import DEFAULT_TIMEOUT_S, run_closed, run_open
from dbstand.loadgen.record import DEFAULT_MAX_ERROR_RATE
from dbstand.loadgen.series import DEFAULT_INTERVAL_S
from dbstand.loadgen.summary import print_summary
from dbstand.loadgen.tls import TLS_VERSIONS, TlsSettings
from dbstand.results.store import (
    ResultsWriteError,
    check_distinct_outputs,
    check_output_path,
    read_results,
)
from dbstand.workloads.http_run import (
    RunFailed,
    check_values,
    open_results,
    results_path,
    with_progress,
)
from dbstand.workloads.run_common import (
    Export,
    named_outputs,
    output_option,
    parse_exports,
    write_exports,
)

DEFAULT_DURATION_S = 10.0
AB_TIMELIMIT_REQUESTS = 50_000  # ab: "-t implies -n 50000"
def _headers(values: list[str] | None, content_type: str | None) -> list[tuple[str, str]]:
    out = []
    for v in values or []:
        name, sep, value = v.partition(":")
        if not sep or not name.strip():
            raise UserError(f"-H expects 'Name: value', got {v!r}")
        out.append((name.strip(), value.strip()))
    if content_type:
        out.append(("Content-Type", content_type))
    return out


def _plan(requests: int | None, timelimit: float | None, duration: float | None,
          rate: float | None) -> tuple[int | None, float | None]:
    """(requests, duration) from ab's and wrk's stop flags."""
    if timelimit is not None and duration is not None:
        raise UserError("give -t (ab's time limit) or -d (wrk's duration), not both")
    if timelimit is not None:
        return (requests or AB_TIMELIMIT_REQUESTS), timelimit
    if rate is not None:
        if duration is None and requests is None:
            duration = DEFAULT_DURATION_S
        if duration is None and requests is not None:
            if rate <= 0:
                raise UserError(f"--rate must be positive (got {rate:g})")
            duration = requests / rate
        return requests, duration
    if requests is None and duration is None:
        duration = DEFAULT_DURATION_S
    return requests, duration


def _tls(url: str, insecure: bool, cacert: Path | None, version: str | None, resume: bool,
         sni: str | None) -> TlsSettings | None:
    """TLS settings for an https:// URL; TLS options on an http:// URL are a mistake."""
    given = insecure or cacert is not None or version is not None or not resume or sni
    if not url.strip().lower().startswith("https://"):
        if given:
            raise UserError("--insecure, --cacert, --tls-version, --no-tls-resume and --sni "
                            "need an https:// URL")
        return None
    if version is not None and version not in TLS_VERSIONS:
        raise UserError(f"--tls-version: 1.2 or 1.3 (got {version!r})")
    if insecure and cacert is not None:
        raise UserError("give --cacert or --insecure, not both")
    if cacert is not None and not cacert.is_file():
        raise UserError(f"--cacert: no such file: {cacert}")
    return TlsSettings(insecure=insecure, ca_file=str(cacert) if cacert else None,
                       resume=resume, version=version, sni=sni)


def http(
    url: Annotated[str, typer.Argument(help="http[s]://host[:port]/path")],
    requests: Annotated[int | None, typer.Option(
        "-n", "--requests", help="Requests in total (ab -n)")] = None,
    concurrency: Annotated[int, typer.Option(
        "-c", "--concurrency", help="Connections at once (ab/wrk -c)")] = 1,
    keepalive: Annotated[bool, typer.Option(
        "--keepalive/--no-keepalive", "-k",
        help="Reuse connections (on by default; -k is accepted for ab)")] = True,
    timelimit: Annotated[float | None, typer.Option(
        "-t", "--timelimit", help="ab -t: at most this many seconds (implies -n 50000)")] = None,
    duration: Annotated[float | None, typer.Option(
        "-d", "--duration", help=f"wrk -d: run this many seconds (default {DEFAULT_DURATION_S:g} "
                                 "when neither -n nor -t is given)")] = None,
    rate: Annotated[float | None, typer.Option(
        "--rate", "-R", help="Open loop (wrk2 -R): requests/s in total; latency counts from "
                             "intended send times")] = None,
    threads: Annotated[int | None, typer.Option(
        "--threads", help="Generator threads (default: half the cores, at least 1, at most "
                          "the connections: measured cheapest per request)")] = None,
    timeout: Annotated[float, typer.Option(
        "-s", "--timeout", help="Seconds before a request times out (more than 0; with -d "
                                "the run ends by then anyway, giving up what is in flight)")]
        = DEFAULT_TIMEOUT_S,
    method: Annotated[str | None, typer.Option(
        "-m", "--method", help="HTTP method (default GET, or POST with -p)")] = None,
    header: Annotated[list[str] | None, typer.Option(
        "-H", "--header", help="Extra header 'Name: value' (repeatable)")] = None,
    post_file: Annotated[Path | None, typer.Option(
        "-p", "--post-file", help="File with the request body (implies POST)")] = None,
    content_type: Annotated[str | None, typer.Option(
        "-T", "--content-type", help="Content-Type of the body")] = None,
    output: Annotated[Path | None, output_option("http")] = None,
    max_error_rate: Annotated[float, typer.Option(
        "--max-error-rate", help="Largest share of failed requests (non-2xx, socket errors, "
                                 "timeouts) for the run to count as ok, 0-1 "
                                 f"(default {DEFAULT_MAX_ERROR_RATE:g} = 1%)")]
        = DEFAULT_MAX_ERROR_RATE,
    interval: Annotated[float, typer.Option(
        "--interval", metavar="SECONDS",
        help="Time series: successes, failures and latency per interval of this many "
             "seconds, recorded as the case's `series` (0: none)")] = DEFAULT_INTERVAL_S,
    insecure: Annotated[bool, typer.Option(
        "--insecure", help="https: accept any server certificate (self-signed test "
                           "servers)")] = False,
    cacert: Annotated[Path | None, typer.Option(
        "--cacert", help="https: PEM file of the CAs to trust (default: the system's)")]
        = None,
    tls_version: Annotated[str | None, typer.Option(
        "--tls-version", help="https: only TLS 1.2 or only 1.3 (default: either, 1.3 "
                              "preferred)")] = None,
    tls_resume: Annotated[bool, typer.Option(
        "--tls-resume/--no-tls-resume",
        help="https: resume TLS sessions on new connections (on by default)")] = True,
    sni: Annotated[str | None, typer.Option(
        "--sni", help="https: server name to send and check instead of the URL's host")]
        = None,
    http2: Annotated[bool, typer.Option(
        "--http2", help="HTTP/2: h2 over TLS (ALPN) for https://, h2c with prior knowledge "
                        "for http:// (closed loop)")] = False,
    streams: Annotated[int, typer.Option(
        "--streams", help="HTTP/2: concurrent streams per connection (h2load -m)")] = 1,
    export: Export = None,
    cluster: ClusterOption = None,
) -> None:
    """Load-test one URL (ab/wrk style) and print an ab-like summary."""
    check_values(requests, concurrency, timelimit, duration, rate, threads, timeout,
                  max_error_rate, interval)
    n, d = _plan(requests, timelimit, duration, rate)
    path = results_path(output)
    check_output_path(path)
    for _, export_path in parse_exports(export):
        check_output_path(export_path, "--export")
    check_distinct_outputs([("the results file", path), *named_outputs(None, export)])
    body = b""
    if post_file is not None:
        try:
            body = post_file.read_bytes()
        except OSError as e:
            raise UserError(f"cannot read -p file {post_file}: {e.strerror}") from None
    verb = (method or ("POST" if post_file else "GET")).upper()
    hdrs = _headers(header, content_type)
    tls = _tls(url, insecure, cacert, tls_version, tls_resume, sni)
    if tls is not None and cluster is not None:
        raise UserError("--cluster runs plain http:// only")
    if streams != 1 and not http2:
        raise UserError("--streams needs --http2")
    if http2 and (rate is not None or cluster is not None or not keepalive):
        raise UserError("--http2 runs the closed loop on kept connections (no --rate, "
                        "--cluster or --no-keepalive)")
    if not 1 <= streams <= 10_000:
        raise UserError(f"--streams: 1 to 10000 (got {streams})")
    common: dict[str, Any] = dict(keepalive=keepalive, timeout_s=timeout, threads=threads,
                                  method=verb, headers=hdrs, body=body, interval_s=interval)
    if tls is not None:
        common["tls"] = tls
    closed_only: dict[str, Any] = {"http2": True, "streams": streams} if http2 else {}
    from dbstand.loadgen.record import http_case_record, rate_note
    from dbstand.results.schema import run_footer
    from dbstand.workloads.execution import new_run_id

    fixed = {"method": verb, "connections": concurrency, "requests": n, "duration_s": d,
             "rate": rate, "keepalive": keepalive, "timeout_s": timeout,
             "headers": [k for k, _ in hdrs], "body_bytes": len(body),
             "max_error_rate": max_error_rate}
    if http2:
        fixed.update(http2=True, streams=streams)
    if tls is not None:
        fixed["tls"] = {"insecure": tls.insecure, "ca_file": tls.ca_file, "resume": tls.resume,
                        "version": tls.version, "sni": tls.sni}
    run_id = new_run_id()
    writer = open_results(path, run_id)
    status, failed, measured = "failed", 0, False
    try:
        load = None
        if cluster is not None:  # each worker runs its share; histograms merged exactly
            load = http_on_cluster(cluster, url, concurrency, n, d, rate, common)
            result = load.result
        elif rate is not None:
            assert d is not None
            result = with_progress(lambda: run_open(url, rate, d, concurrency, **common), d)
        else:
            result = with_progress(
                lambda: run_closed(url, concurrency, requests=n, duration=d, **common,
                                   **closed_only), d)
        measured = True
        print_summary(result, console)
        if load is not None:
            print_cluster(load, console)
        params = {**fixed, "threads": result.threads}
        if load is not None:
            params["cluster"] = load.cluster["spec"]
        record = http_case_record(result, run_id, 0, params, max_error_rate)
        if load is not None:
            record["cluster"] = load.record()
        try:
            writer.append(record)
        except ResultsWriteError as exc:
            where = writer.rescue([record], run_id)
            raise ResultsWriteError(f"{exc}; the run's record was saved to {where}") from None
        failed = int(record["status"] != "ok")
        status = "complete-with-failures" if failed else "complete"
    except KeyboardInterrupt as exc:
        status = "interrupted"
        partial = getattr(exc, "partial", None)
        if partial is not None and not measured:  # what the load measured until then
            measured = True
            record = http_case_record(partial, run_id, 0, {**fixed, "threads": partial.threads},
                                      max_error_rate)
            record.update(status="failed", interrupted=True, error=(
                f"interrupted after {partial.elapsed_s:.1f} s: the figures cover only that "
                "part of the run"))
            writer.append(record)
        raise
    finally:
        if not writer.broken:
            writer.append(run_footer(run_id, status, 1, failed))
        writer.close()
        if not measured:  # the engine refused the run: no results file is left
            path.unlink(missing_ok=True)
    console.print(f"results: [bold]{path}[/]")
    note = rate_note(result)
    if note is not None:
        err_console.print(f"warning: {note[1]}", highlight=False)
    write_exports(read_results(path), export)
    if failed:
        raise RunFailed(str(record["error"]))
