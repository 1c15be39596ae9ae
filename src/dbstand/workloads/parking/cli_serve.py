"""`dbstand serve parking`: one parking implementation in the foreground, to poke at
with a browser or curl, or to point another client (`dbstand verify parking --url`)
at; Ctrl-C stops it and leaves no process behind."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from dbstand.console import console
from dbstand.errors import ServerError
from dbstand.paths import state_dir
from dbstand.targets.managed import pid_running
from dbstand.targets.url import parse_target_url


def serve_parking(
    stack: Annotated[str, typer.Option(
        help="A parking server stack (python-raw, python-sqlalchemy, python-peewee, "
             "pypy-sqlalchemy, go-parking-gorm...: `dbstand stack list`)")],
    target: Annotated[str, typer.Option(help="Database URL (sqlite:///file.db, "
                                             "postgresql://..., mysql://...)")],
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one)")
                    ] = None,
    logging: Annotated[bool, typer.Option("--logging/--no-logging",
                                          help="Log every request and SQL statement")] = False,
    threads: Annotated[int, typer.Option(help="Worker threads of the app server")] = 1,
    prefix: Annotated[str, typer.Option(help="Prefix of dbstand's tables")] = "dbstand_",
) -> None:
    """Serve the parking service (schema and seed rows created if missing) until Ctrl-C."""
    from dbstand.workloads.parking.app import running_service

    url = parse_target_url(target)
    log_dir: Path = state_dir() / "logs"
    with running_service(stack, url, logging=logging, port=port, threads=threads,
                         prefix=prefix, log_dir=log_dir) as service:
        try:  # from the first line on: a Ctrl-C read from it may come before the second
            console.print(f"parking ({stack}) on {url.redacted()}: "
                          f"[bold]{service.base_url}/[/]")
            console.print(f"  app server pid {service.pid}"
                          + (f"; log: {service.log_path}" if service.log_path else "")
                          + "; Ctrl-C stops it")
            while pid_running(service.pid):
                time.sleep(0.5)
        except KeyboardInterrupt:
            console.print("stopping")
            return
    raise ServerError(f"the parking service (pid {service.pid}) exited unexpectedly")
