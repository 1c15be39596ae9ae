"""`dbstand run webtech`: the study's pages on every server stack, two tables."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_ints, split_list
from dbstand.distributed.cli import ClusterOption
from dbstand.stacks.manifest import stacks_for
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.execution import RunRequest, execute
from dbstand.workloads.http_load import SEED, STEADY, check_load, served_config
from dbstand.workloads.network_axis import APP_PARAM, app_paths, db_paths, with_paths
from dbstand.workloads.run_common import (
    AppRtt,
    DbRtt,
    Export,
    Html,
    Output,
    Profile,
    finish,
    results_path,
)
from dbstand.workloads.webtech.options import (
    DEFAULT_REPEATS,
    DEFAULT_REQUESTS,
    MIN_REPEATS,
    WebtechOptions,
)
from dbstand.workloads.webtech.rules import TESTS
from dbstand.workloads.webtech.workload import (
    DEFAULT_CLIENTS,
    WORKLOAD,
    WebtechWorkload,
    build_cases,
    check_request,
)

#: the tests that read the database: the only ones with a --db-rtt path
DB_TESTS = ("db", "cache")


@contextlib.contextmanager
def database(text: str | None) -> Iterator[TargetURL]:
    """The target given, or a throwaway MariaDB (the study used MySQL) for the run."""
    if text:
        yield parse_target_url(text)
        return
    from dbstand.targets.mysql.managed import ManagedMariaDB

    server = ManagedMariaDB()
    try:
        with console.status("starting a throwaway MariaDB for the db and cache tests..."):
            record = server.start()
        yield record.target()
    finally:
        server.stop()


def run_webtech(
    stack: Annotated[str | None, typer.Option(
        help="Server stacks, comma-separated (default: every installed webtech stack; "
             "`dbstand stack list --workload webtech`)")] = None,
    test: Annotated[str, typer.Option(help="Tests: " + ",".join(TESTS))]
        = "file,hello,loop,big,db,cache",
    clients: Annotated[str, typer.Option(
        help="Concurrent keep-alive clients per level, e.g. 1,4,16,64,256")]
        = ",".join(map(str, DEFAULT_CLIENTS)),
    requests: Annotated[int, typer.Option(
        help="Requests per client in a run (steady: at least; seed: exactly)")]
        = DEFAULT_REQUESTS,
    repeats: Annotated[int | None, typer.Option(
        help=f"Runs per case (steady: at least, default {MIN_REPEATS}; seed: exactly, "
             f"default {DEFAULT_REPEATS})")] = None,
    load: Annotated[str, typer.Option(
        help="steady: warm up until throughput is steady, runs of at least 1 s and "
             "--requests, repeated until the 95% CI is within --ci (or --max-runs: "
             "unstable); seed: the study's literal load (one warm-up request, --repeats "
             "runs of exactly --requests)")] = STEADY,
    ci: Annotated[float, typer.Option(
        help="Target half-width of the 95% CI, % of the mean (wider: unstable)")] = 3.0,
    max_runs: Annotated[int, typer.Option(help="steady: runs at most (the cap)")] = 30,
    duration: Annotated[float | None, typer.Option(
        help="Seconds per run instead of a request count")] = None,
    open_loop: Annotated[bool, typer.Option(
        "--open-loop", help="Also load each test at half its closed-loop maximum, with "
                            "coordinated-omission-corrected latency")] = False,
    keepalive: Annotated[bool, typer.Option("--keepalive/--no-keepalive")] = True,
    workers: Annotated[int | None, typer.Option(
        help="Worker processes/threads of each stack (default: the CPU count)")] = None,
    max_error_rate: Annotated[float, typer.Option(
        help="A case with more non-2xx answers or socket errors than this share fails")]
        = 0.01,
    target: Annotated[str | None, typer.Option(
        help="Database of the db and cache tests (default: a throwaway MariaDB)")] = None,
    prefix: Annotated[str, typer.Option(help="Prefix of the tables dbstand owns")]
        = DEFAULT_PREFIX,
    db_rtt: DbRtt = None,
    app_rtt: AppRtt = None,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
    cluster: ClusterOption = None,
) -> None:
    """webtech: file, hello, loop, big, db and cache pages (and TechEmpower's json and
    plaintext) on every server stack; the study's one-user and four-user tables."""
    check_prefix(prefix)
    check_load(load)
    repeats = repeats or (DEFAULT_REPEATS if load == SEED else MIN_REPEATS)
    options = WebtechOptions(requests=requests, repeats=repeats, duration_s=duration, load=load,
                             keepalive=keepalive, workers=workers, prefix=prefix,
                             max_error_rate=max_error_rate, cluster=cluster, profile=profile)
    stacks = split_list(stack, "--stack") or [m.name for m in stacks_for(WORKLOAD)]
    tests = split_list(test, "--test")
    levels = split_ints(clients, "--clients")
    check_request(stacks, tests, levels, options)  # before a database is started
    with database(target) as url:
        cases = build_cases(url, stacks, tests, levels, open_loop, options)
        # only the tests that read the database have a path to delay
        if paths := db_paths(db_rtt, [url]):
            cases = [c for c in cases if c.op not in DB_TESTS] + with_paths(
                [c for c in cases if c.op in DB_TESTS], paths)
        cases = with_paths(cases, app_paths(app_rtt), APP_PARAM)
        config = served_config(load, repeats, ci, max_runs)
        results = execute(RunRequest(WebtechWorkload(options), cases, config,
                                     results_path(output, html, export, WORKLOAD),
                                     redacted_argv()),
                          console)
    finish(results, html, export)
