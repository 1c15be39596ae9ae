"""`dbstand run`: the default suite, or one workload's matrix (`dbstand run kv|batch|...`).

Each workload brings its own `run` command (workloads.ENTRIES); they are imported only
when invoked.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dbstand.cli.lazy import LazyCommand, lazy_group
from dbstand.console import console, redacted_argv
from dbstand.workloads import ENTRIES
from dbstand.workloads.run_common import Export, Html, Output, finish, run_targets

DEFAULT_SUITE_REVS = 50_000

app = typer.Typer(
    help="Run benchmarks. With no workload: the default suite (kv on SQLite).",
    invoke_without_command=True, no_args_is_help=False,
    cls=lazy_group({name: LazyCommand(e.commands["run"], e.description)
                    for name, e in ENTRIES.items() if "run" in e.commands}))


@app.callback()
def default_suite(
    ctx: typer.Context, output: Output = None, html: Html = None, export: Export = None,
    revs: Annotated[int, typer.Option(
        help="Operations per iteration, and rows of the table")] = DEFAULT_SUITE_REVS,
    min_iterations: Annotated[int, typer.Option(help="Iterations before stopping")] = 5,
    max_iterations: Annotated[int, typer.Option(
        help="Iterations at most per case (UNSTABLE if the interval is still wider than "
             "3%)")] = 30,
) -> None:
    """The default suite: kv (all six operations) through sqlite3 on in-memory SQLite.

    In-memory operations take about 2 us, so the study's 10,000 per iteration last only
    ~20 ms: a single scheduler hiccup swings such a sample. The suite uses iterations
    of 50,000 operations (~100 ms, the length pyperf aims its samples at) on a table
    of as many rows (delete removes each key at most once per iteration).
    """
    if ctx.invoked_subcommand is not None:
        return
    from dbstand.engine.config import EngineConfig
    from dbstand.workloads.execution import RunRequest, default_output, execute
    from dbstand.workloads.kv.cli import kv_cases
    from dbstand.workloads.kv.options import KvOptions
    from dbstand.workloads.kv.workload import OPS, KvWorkload

    config = EngineConfig(revs=revs, steady_warmup=True, min_iterations=min_iterations,
                          max_iterations=max_iterations)
    with run_targets(None) as targets:
        options = KvOptions(rows=revs)
        cases = kv_cases(targets, ["sqlite3"], list(OPS), ["sync"], config.revs, options)
        results = execute(RunRequest(KvWorkload(options), cases, config,
                                      output or default_output("kv"), redacted_argv()),
                          console)
    finish(results, html, export)


