"""What every `dbstand run <workload>` command shares: output options, targets and
the end of a run (table, report, exit code)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dbstand.console import console, redacted_argv, split_list
from dbstand.distributed.cli import ClusterOption
from dbstand.errors import UserError
from dbstand.profiles import PROFILE_HELP
from dbstand.report.renderers import EXPORT_FORMATS

if TYPE_CHECKING:
    from rich.console import Console

    from dbstand.engine.config import EngineConfig
    from dbstand.results.store import ResultsFile
    from dbstand.targets.url import TargetURL
    from dbstand.workloads.base import Case, Workload

DEFAULT_TARGET = "sqlite://"

#: --target of the in-process runs (`run_targets`)
Targets = Annotated[str | None, typer.Option(
    help="Target URL(s), comma-separated; default: in-memory SQLite")]

DbRtt = Annotated[str | None, typer.Option(
    "--db-rtt", help="Round-trip times between client and database, e.g. 0,0.2ms,1ms: 0 "
    "is the direct path; any other value runs the cases through a managed Toxiproxy "
    "adding that RTT (half each way) and adds a 'proxy, 0 ms' row (docs/network.md)")]

AppRtt = Annotated[str | None, typer.Option(
    "--app-rtt", help="Round-trip times between the load generator and the stack, e.g. "
    "0,0.2ms,1ms: as --db-rtt, for the HTTP hop (docs/network.md)")]

#: --mode, --pin and --loop of the in-process runs that take them alike (script, python;
#: kv words its own: several loops a run, a placement table)
Modes = Annotated[str, typer.Option(
    help="Modes: sync, threads:N, asyncio:N, processes:P[xasyncio:N]; each stack runs the "
         "ones it can")]
Pin = Annotated[bool, typer.Option(help="Pin client and server CPUs (as kv)")]
Loop = Annotated[str, typer.Option(help="Event loop for asyncio modes: asyncio, uvloop")]


def output_option(name: str) -> Any:
    """--output/-o of a command whose results file is by default
    results/<time>-NAME.jsonl (`execution.default_output(NAME)`)."""
    return typer.Option("--output", "-o",
                        help=f"Results file (JSON Lines); default results/<time>-{name}.jsonl")


Output = Annotated[Path | None, output_option("<workload>")]


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


@dataclass(frozen=True)
class RunShared:
    """The options a `run <workload>` command shares with the others, as given:
    where the results, the report and the exports go, --profile, and where the command
    has them, --db-rtt, --app-rtt and --cluster (declared once, by `run_command`)."""

    output: Path | None = None
    html: Path | None = None
    export: list[str] | None = None
    profile: bool = False
    db_rtt: str | None = None
    app_rtt: str | None = None
    cluster: str | None = None

    def execute(self, workload: Workload, cases: list[Case], config: EngineConfig,
                name: str) -> ResultsFile:
        """Run the cases into the results file (default: results/<time>-<name>.jsonl),
        refused first if a report or an export names it; the command line redacted."""
        from dbstand.workloads.execution import RunRequest, execute

        path = results_path(self.output, self.html, self.export, name)
        return execute(RunRequest(workload, cases, config, path, redacted_argv()), console)

    def finish(self, results: ResultsFile) -> None:
        finish(results, self.html, self.export)


#: the shared options in the order --help lists them, after the command's own: the
#: parameter, its option (the Annotated type above) and its default
_SHARED: dict[str, tuple[Any, Any]] = {
    "db_rtt": (DbRtt, None), "app_rtt": (AppRtt, None), "output": (Output, None),
    "html": (Html, None), "export": (Export, None), "profile": (Profile, False),
    "cluster": (ClusterOption, None)}
#: the ones every run command has; the others only where named
_EVERY_RUN = ("output", "html", "export", "profile")


def _option(default: Any, help: str) -> Any:
    """A field of an option group: its default, and its option's help text."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class EngineArgs:
    """The stop rule's options of the in-process runs that declare them alike (script,
    python; kv and batch word theirs for their own iterations): the `engine` parameter
    of a `run_command`, its fields the options in its place among the command's own."""

    warmup: int = _option(1, "Uncounted warm-up iterations")
    min_iterations: int = _option(5, "Iterations before stopping")
    max_iterations: int = _option(30, "Cap on iterations")
    max_time: float = _option(60.0, "Seconds per case before stopping")
    ci: float = _option(3.0, "Stop when the 95% CI is within ±CI %")
    interval: float = _option(1.0, "Seconds per interval of the recorded time series; 0: none")

    def config(self, revs: int, latency: str, seed: int) -> EngineConfig:
        from dbstand.engine.config import EngineConfig

        return EngineConfig(revs=revs, warmup=self.warmup, min_iterations=self.min_iterations,
                            max_iterations=self.max_iterations, max_time_s=self.max_time,
                            target_ci_pct=self.ci, latency=latency, seed=seed,
                            interval_s=self.interval)


ENGINE_DEFAULTS = EngineArgs()


def _engine_options() -> list[inspect.Parameter]:
    return [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              annotation=Annotated[type(f.default),
                                                   typer.Option(help=f.metadata["help"])],
                              default=f.default)
            for f in dataclasses.fields(EngineArgs)]


def run_command(*also: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Gives a `run <workload>` command the options it shares with others, each declared
    once here. After the command's own: --db-rtt and --app-rtt (if named in `also`),
    --output, --html, --export, --profile and --cluster (if named), which the command
    takes as one keyword-only `shared: RunShared`; and where the command has a parameter
    `engine: EngineArgs`, the stop rule's options in its place. Typer sees the options
    in the signature made here."""
    names = [name for name in _SHARED if name in _EVERY_RUN or name in also]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        params: list[inspect.Parameter] = []
        engine = False
        for p in inspect.signature(command, eval_str=True).parameters.values():
            if p.name == "engine":
                params += _engine_options()
                engine = True
            elif p.name != "shared":
                params.append(p)
        params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                     annotation=_SHARED[name][0], default=_SHARED[name][1])
                   for name in names]

        @functools.wraps(command)
        def with_shared(**kwargs: Any) -> None:
            if engine:
                kwargs["engine"] = EngineArgs(**{f.name: kwargs.pop(f.name, f.default)
                                                 for f in dataclasses.fields(EngineArgs)})
            shared = RunShared(**{name: kwargs.pop(name, _SHARED[name][1]) for name in names})
            command(**kwargs, shared=shared)

        with_shared.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        with_shared.__annotations__ = {p.name: p.annotation for p in params}
        return with_shared

    return decorate


def check_loop(loop: str) -> None:
    """An asyncio mode's event loop (script, python: one per run)."""
    if loop not in ("asyncio", "uvloop"):
        raise UserError(f"--loop takes asyncio or uvloop, not {loop!r}")
