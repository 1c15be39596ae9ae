"""`dbstand run docquery` and `dbstand serve docquery`: the Tornado endpoint study."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Annotated

import typer

from dbstand.console import console, redacted_argv, split_list
from dbstand.distributed.cli import ClusterOption
from dbstand.errors import UserError
from dbstand.stacks.manifest import stacks_for
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.docquery.options import DocqueryOptions
from dbstand.workloads.docquery.workload import (
    CONNECTIONS,
    TESTS,
    WORKLOAD,
    DocqueryWorkload,
    build_cases,
)
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

#: (URL, the server's name in results, database server pids whose CPU counts)
Served = tuple[TargetURL, str, list[int]]


@contextlib.contextmanager
def databases(texts: list[str]) -> Iterator[list[Served]]:
    """The targets given, or the study's stand-ins started for the run: FerretDB on its
    SQLite backend, a PostgreSQL, and FerretDB on that PostgreSQL."""
    if texts:
        yield [(parse_target_url(t), parse_target_url(t).redacted(), []) for t in texts]
        return
    from dbstand.targets.mongodb.managed import ManagedFerretDB
    from dbstand.targets.postgresql.managed import ManagedPostgres

    with contextlib.ExitStack() as stack:
        with console.status("starting FerretDB (SQLite backend), PostgreSQL and FerretDB "
                            "(PostgreSQL backend); the first start builds FerretDB..."):
            lite = stack.enter_context(ManagedFerretDB())
            pg = stack.enter_context(ManagedPostgres())
            on_pg = stack.enter_context(ManagedFerretDB(settings={
                "backend": "postgresql", "postgresql_url": pg.target().secret()}))
        yield [(lite.target(), str(lite.settings["server"]), [lite.pid]),
               (pg.target(), f"PostgreSQL {pg.settings.get('version', '')}".strip(), [pg.pid]),
               (on_pg.target(), str(on_pg.settings["server"]), [on_pg.pid, pg.pid])]


def run_docquery(
    stack: Annotated[str | None, typer.Option(
        help="Stacks, comma-separated (default: every docquery stack; `dbstand stack list "
             "--workload docquery`)")] = None,
    target: Annotated[str | None, typer.Option(
        help="mongodb:// and/or postgresql:// URLs, comma-separated (default: FerretDB on "
             "SQLite, PostgreSQL, and FerretDB on that PostgreSQL, started for the run)")]
        = None,
    test: Annotated[str, typer.Option(
        help="test1 (10,000 requests at concurrency 100), test2 (100 at 10)")]
        = ",".join(TESTS),
    connections: Annotated[str, typer.Option(
        help="new (a connection per request, as ab) and/or keepalive")]
        = ",".join(CONNECTIONS),
    size: Annotated[int, typer.Option(help="Documents in the posts collection")] = 1_000_000,
    seed: Annotated[int, typer.Option(help="Seed of the data set")] = 3,
    load: Annotated[str, typer.Option(
        help="steady: warm up until steady, runs of at least 1 s and the test's request "
             "count, repeated until the 95% CI is within --ci (or --max-runs: unstable); "
             "seed: the study's literal load (--repeats runs of exactly the test's count)")]
        = STEADY,
    repeats: Annotated[int | None, typer.Option(
        help="Runs per case (steady: at least, default 5; seed: exactly, default 3)")]
        = None,
    ci: Annotated[float, typer.Option(
        help="Target half-width of the 95% CI, % of the mean (wider: unstable)")] = 3.0,
    max_runs: Annotated[int, typer.Option(help="steady: runs at most (the cap)")] = 30,
    open_loop: Annotated[bool, typer.Option(
        "--open-loop", help="Also load at half the closed-loop maximum (corrected latency)")]
        = False,
    max_error_rate: Annotated[float, typer.Option(
        help="A case with more failed requests than this share fails")] = 0.01,
    prefix: Annotated[str, typer.Option(help="Prefix of the collections and tables dbstand "
                                             "owns")] = DEFAULT_PREFIX,
    db_rtt: DbRtt = None,
    app_rtt: AppRtt = None,
    output: Output = None,
    html: Html = None,
    export: Export = None,
    profile: Profile = False,
    cluster: ClusterOption = None,
) -> None:
    """docquery: sync driver vs async driver vs ODM behind one Tornado endpoint, on
    MongoDB-wire servers and PostgreSQL; ApacheBench's table for each case."""
    check_prefix(prefix)
    check_load(load)
    repeats = repeats or (3 if load == SEED else 5)
    options = DocqueryOptions(size=size, seed=seed, repeats=repeats, load=load, prefix=prefix,
                              max_error_rate=max_error_rate, cluster=cluster, profile=profile)
    options.check()
    stacks = split_list(stack, "--stack") or [m.name for m in stacks_for(WORKLOAD)]
    readable = sorted({k for m in stacks_for(WORKLOAD) for k in m.databases}, reverse=True)
    for url in split_list(target, "--target"):
        if parse_target_url(url).kind not in readable:
            raise UserError(f"docquery reads {' or '.join(f'{k}://' for k in readable)} "
                            f"targets, not {url}")
    workload = DocqueryWorkload(options)
    with databases(split_list(target, "--target")) as served:
        pairs = [(url, name) for url, name, _ in served]
        usable = [s for s in stacks
                  if any(url.kind in _databases(s) for url, _ in pairs)]
        cases = build_cases(pairs, usable, split_list(test, "--test"),
                            split_list(connections, "--connections"), open_loop, options)
        cases = with_paths(cases, db_paths(db_rtt, [url for url, _ in pairs]))
        cases = with_paths(cases, app_paths(app_rtt), APP_PARAM)
        workload.use_targets({url.redacted(): pids for url, _, pids in served if pids})
        config = served_config(load, repeats, ci, max_runs)
        results = execute(RunRequest(workload, cases, config,
                                     results_path(output, html, export, WORKLOAD),
                                     redacted_argv()),
                          console)
    finish(results, html, export)


def _databases(stack: str) -> tuple[str, ...]:
    from dbstand.stacks.manifest import get_manifest

    return get_manifest(stack, WORKLOAD).databases


def serve_docquery(
    stack: Annotated[str, typer.Option(help="A docquery stack")],
    target: Annotated[str, typer.Option(help="mongodb:// or postgresql:// URL")],
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one)")]
        = None,
    size: Annotated[int, typer.Option(help="Documents (loaded first if missing)")]
        = 1_000_000,
    seed: Annotated[int, typer.Option(help="Seed of the data set")] = 3,
    prefix: Annotated[str, typer.Option(help="Prefix of dbstand's collections and tables")]
        = DEFAULT_PREFIX,
) -> None:
    """Serve one docquery endpoint (data loaded first if missing) until Ctrl-C."""
    from dbstand.console import check_port
    from dbstand.stacks.launcher import running_stack
    from dbstand.stacks.manifest import get_manifest
    from dbstand.workloads.docquery.verify import PATH, served

    check_port(port)
    check_prefix(prefix)
    manifest = get_manifest(stack, WORKLOAD)
    url = parse_target_url(target)
    if url.kind not in manifest.databases:
        raise UserError(f"stack {stack!r} reads {', '.join(manifest.databases)}, not "
                        f"{url.kind}")
    spec = served(size, seed)
    spec.prepare(url, prefix)
    with running_stack(manifest, target=url, port=port, prefix=prefix, workers=1) as handle:
        console.print(f"docquery ({stack}) on {url.redacted()}: "
                      f"[bold]{handle.base_url}{PATH}[/] (pid {handle.pid}); Ctrl-C stops it")
        while handle.alive():
            time.sleep(0.5)
    raise UserError(f"stack {stack!r} exited on its own")
