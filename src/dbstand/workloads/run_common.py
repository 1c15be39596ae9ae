"""What every `dbstand run <workload>` command shares: output options, targets and
the end of a run (table, report, exit code)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dbstand.console import console, split_list
from dbstand.errors import UserError
from dbstand.profiles import PROFILE_HELP
from dbstand.report.renderers import EXPORT_FORMATS

if TYPE_CHECKING:
    from rich.console import Console

    from dbstand.results.store import ResultsFile
    from dbstand.targets.url import TargetURL

DEFAULT_TARGET = "sqlite://"

DbRtt = Annotated[str | None, typer.Option(
    "--db-rtt", help="Round-trip times between client and database, e.g. 0,0.2ms,1ms: 0 "
    "is the direct path; any other value runs the cases through a managed Toxiproxy "
    "adding that RTT (half each way) and adds a 'proxy, 0 ms' row (docs/network.md)")]

AppRtt = Annotated[str | None, typer.Option(
    "--app-rtt", help="Round-trip times between the load generator and the stack, e.g. "
    "0,0.2ms,1ms: as --db-rtt, for the HTTP hop (docs/network.md)")]

Output = Annotated[Path | None, typer.Option("--output", "-o",
                   help="Results file (JSON Lines); default results/<time>-<workload>.jsonl")]
def _check_path(path: Path, option: str) -> None:
    """A report path that cannot be written is refused before the run, not after."""
    from dbstand.results.store import check_output_path

    try:
        check_output_path(path, option)
    except UserError as exc:
        raise typer.BadParameter(str(exc).removeprefix(f"{option} "),
                                 param_hint=option) from None


def _check_html(path: Path | None) -> Path | None:
    if path is not None:
        _check_path(path, "--html")
    return path


Html = Annotated[Path | None, typer.Option("--html", callback=_check_html,
                                           help="Also write the HTML report here")]
Profile = Annotated[bool, typer.Option("--profile", help=PROFILE_HELP)]


def parse_exports(values: list[str] | None) -> list[tuple[str, Path]]:
    """`FORMAT=PATH` pairs, checked before a run starts so a typo costs no run."""
    out = []
    for value in values or []:
        format, sep, path = value.partition("=")
        format = format.strip()
        if not sep or not path.strip():
            raise typer.BadParameter(f"expected FORMAT=PATH, got {value!r}",
                                     param_hint="--export")
        if format not in EXPORT_FORMATS:
            raise typer.BadParameter(f"unknown format {format!r} (known: "
                                     f"{', '.join(EXPORT_FORMATS)})", param_hint="--export")
        out.append((format, Path(path.strip())))
    return out


def _check_exports(values: list[str] | None) -> list[str] | None:
    from dbstand.results.store import check_distinct_outputs, check_output_path

    pairs = parse_exports(values)
    for _, path in pairs:
        try:
            check_output_path(path, "--export")
        except UserError as exc:
            raise typer.BadParameter(str(exc).removeprefix("--export "),
                                     param_hint="--export") from None
    check_distinct_outputs([("--export", path) for _, path in pairs])
    return values


def named_outputs(html: Path | None, export: list[str] | None) -> list[tuple[str, Path]]:
    """The report and export paths of a command, named by their options."""
    named = [("--html", html)] if html is not None else []
    return named + [("--export", path) for _, path in parse_exports(export)]


def results_path(output: Path | None, html: Path | None, export: list[str] | None,
                 workload: str) -> Path:
    """The run's results file (given or the default), refused before measuring when a
    report or an export names it too: writing those would destroy the measurements."""
    from dbstand.results.store import check_distinct_outputs
    from dbstand.workloads.execution import default_output

    path = output or default_output(workload)
    check_distinct_outputs([("the results file", path), *named_outputs(html, export)])
    return path


Export = Annotated[list[str] | None, typer.Option(
    "--export", metavar="FORMAT=PATH", callback=_check_exports,
    help="Also write the report as FORMAT to PATH (repeatable); FORMAT: "
         + ", ".join(EXPORT_FORMATS))]


def write_exports(results: ResultsFile, exports: list[str] | None,
                  out: Console = console) -> None:
    """Write each `FORMAT=PATH` export atomically and say where it went."""
    from dbstand.workloads.render import write_exports as write_all

    pairs = parse_exports(exports)
    write_all(results, pairs)
    for format, path in pairs:
        out.print(f"{format}: [bold]{path}[/]")


def finish(results: ResultsFile, html: Path | None, export: list[str] | None = None) -> None:
    """Print the table and where things are, write the report and every export (each
    atomically); exit 1 if a case failed (for CI), after the files are written."""
    from dbstand.workloads.render import render_terminal, write_report

    render_terminal(results, console)
    console.print(f"results: [bold]{results.path}[/]")
    if html is not None:
        write_report(results, html, "html")
        console.print(f"report: [bold]{html}[/]")
    write_exports(results, export)
    failed = sum(1 for c in results.cases if c.get("status") != "ok")
    if failed:
        console.print(f"[red]{failed} case(s) failed[/]")
        raise typer.Exit(1)


@contextlib.contextmanager
def run_targets(text: str | None) -> Iterator[list[TargetURL]]:
    """Targets of the matrix; none given means embedded in-memory SQLite.

    In memory, because the default suite must be stable on any laptop: a file database
    adds the disk's and the page cache's noise (pass sqlite:///file.db to measure it).
    """
    from dbstand.targets.url import parse_target_url

    yield [parse_target_url(t) for t in split_list(text or DEFAULT_TARGET, "--target")]


def default_stacks(targets: list[TargetURL], workload: str) -> list[str]:
    """The stacks a run of `workload` uses when --stack is not given: each target
    kind's own (its descriptor's `default_stacks`), in order, once each."""
    from dbstand.targets.kinds import get_kind

    stacks: list[str] = []
    for target in targets:
        for name in get_kind(target.kind).default_stacks.get(workload, ()):
            if name not in stacks:
                stacks.append(name)
    if not stacks:
        raise UserError("no default stack for these targets: name one with --stack")
    return stacks
