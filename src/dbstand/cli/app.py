"""Entry point: builds the Typer app and turns user errors into one line."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import click
import typer

from dbstand.cli import (  # noqa: F401
    compare,
    http,
    listing,
    report,
    run,
    run_batch,
    run_parking,
    serve,
    server,
    verify,
)
from dbstand.cli.common import redact_text
from dbstand.errors import UserError

app = typer.Typer(
    name="dbstand",
    help="A test stand for data-access stacks: drivers, ORMs, batch APIs and concurrency "
         "models, measured on real databases.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(run.app, name="run")
app.command("report")(report.report)
app.command("compare")(compare.compare_runs)
app.add_typer(listing.app, name="list")
app.add_typer(server.app, name="server")
app.command("http")(http.http)
app.add_typer(serve.app, name="serve")
app.add_typer(verify.app, name="verify")


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM behaves like Ctrl-C: servers we started are stopped, results closed."""
    raise KeyboardInterrupt


def _usage_message(exc: click.ClickException) -> str:
    """A usage error as one line, naming the command's --help for the details."""
    message = redact_text(" ".join(exc.format_message().split()))
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.info_name == "run" and message.startswith("No such command"):
        from dbstand.workloads import WORKLOADS

        name = message.split("'")[1] if "'" in message else "?"
        return f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})"
    if ctx is not None:
        return f"{message} (see `{ctx.command_path} --help`)"
    return message


def main(argv: list[str] | None = None) -> None:
    signal.signal(signal.SIGTERM, _terminate)
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
        print(f"dbstand: error: {redact_text(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    if code == 130:  # typer returns Ctrl-C as exit code 130 in non-standalone mode
        print("dbstand: interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
