"""Entry point: builds the Typer app and turns user errors into one line.

Subcommands are lazy (cli/lazy.py): `dbstand --help` imports typer and rich, not
the engine, a driver or the HTTP engine.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

import click
import typer

from dbstand.cli.lazy import LazyCommand, lazy_group
from dbstand.errors import UserError
from dbstand.workloads import ENTRIES


def _workload_group(verb: str, help_text: str) -> typer.Typer:
    """`dbstand serve|verify <workload>`: one subcommand per workload that has it."""
    commands = {name: LazyCommand(e.commands[verb], e.description)
                for name, e in ENTRIES.items() if verb in e.commands}
    return typer.Typer(help=help_text, no_args_is_help=True, cls=lazy_group(commands))


_COMMANDS = {
    "run": LazyCommand("dbstand.cli.run:app", "Run benchmarks. With no workload: the "
                       "default suite (kv on SQLite)."),
    "report": LazyCommand("dbstand.cli.report:report", "Print a results file again, as a "
                          "table, Markdown, CSV, JSON or HTML."),
    "compare": LazyCommand("dbstand.cli.compare:compare_runs", "Compare two runs: ratios "
                           "and a significance test per case; a CI gate."),
    "list": LazyCommand("dbstand.cli.listing:app", "List stacks, workloads or targets."),
    "server": LazyCommand("dbstand.cli.server:app", "Throwaway database servers on "
                          "127.0.0.1: up, down, status."),
    "http": LazyCommand("dbstand.cli.http:http", "Load an HTTP URL with the native engine "
                        "(ab/wrk-style)."),
    "stack": LazyCommand("dbstand.cli.stack:app", "Server stacks: build, start, check."),
    "study": LazyCommand("dbstand.studies.cli:study", "Run a seed's study here: its figures "
                         "beside the measured ones, each claim checked."),
}

app = typer.Typer(
    name="dbstand",
    help="A test stand for data-access stacks: drivers, ORMs, batch APIs and concurrency "
         "models, measured on real databases.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # plain help: rich's help renderer alone costs ~30 ms
    cls=lazy_group(_COMMANDS),
)


@app.callback()
def _options(stack_dir: list[Path] | None = typer.Option(  # noqa: B008 (typer's way)
        None, "--stack-dir", metavar="PATH",
        help="A folder of your own server stacks (stack.toml each, docs/stack-manifest.md); "
             "repeatable; DBSTAND_STACKS lists more, separated by ':'")) -> None:
    """dbstand's options before the command."""
    if stack_dir:
        from dbstand.stacks.manifest import add_stack_dirs

        add_stack_dirs(stack_dir)


app.add_typer(_workload_group("serve", "Run a workload's service in the foreground."),
              name="serve")
app.add_typer(_workload_group("verify", "Check implementations against a workload's "
                              "conformance suite."), name="verify")


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM behaves like Ctrl-C: servers we started are stopped, results closed.
    Both also set a flag that waiting loops poll (dbstand.interrupts: an exception
    raised in a handler can be lost)."""
    from dbstand import interrupts

    interrupts.request()
    if not interrupts.in_gc_callback(frame):  # there Python would print it and go on
        raise KeyboardInterrupt


def _usage_message(exc: click.ClickException) -> str:
    """A usage error as one line, naming the command's --help for the details."""
    from dbstand.console import redact_text

    message = redact_text(" ".join(exc.format_message().split()))
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.info_name == "run" and message.startswith("No such command"):
        name = message.split("'")[1] if "'" in message else "?"
        return f"unknown workload {name!r} (known: {', '.join(ENTRIES)})"
    if ctx is not None:
        return f"{message} (see `{ctx.command_path} --help`)"
    return message


def _clear_leftovers() -> None:
    """Servers and work folders an earlier, killed dbstand left (targets/leftovers.py)."""
    from dbstand.targets.leftovers import sweep

    try:
        lines = sweep()
    except Exception as exc:  # never a reason for this command to fail
        lines = [f"could not look for what a killed dbstand left: {exc}"]
    for line in lines:
        print(f"dbstand: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    from dbstand import interrupts

    interrupts.reset()
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _terminate)
    _clear_leftovers()
    try:
        code = app(args=argv, standalone_mode=False, prog_name="dbstand")
    except click.exceptions.Exit as exc:
        if exc.exit_code == 130:  # typer's translation of Ctrl-C
            print("dbstand: interrupted", file=sys.stderr)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        print(f"dbstand: error: {_usage_message(exc)}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        print("dbstand: interrupted", file=sys.stderr)
        sys.exit(130)
    except UserError as exc:
        from dbstand.console import redact_text

        print(f"dbstand: error: {redact_text(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    if code == 130:  # typer returns Ctrl-C as exit code 130 in non-standalone mode
        print("dbstand: interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
