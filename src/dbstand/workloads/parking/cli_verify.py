"""`dbstand verify parking`: the conformance suite against a stack or a running URL.

Exit 0 when every scenario passed, 1 when one failed (a stack that fails is not
measured by `dbstand run parking`), 2 for a user mistake.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Annotated
from urllib.parse import urlsplit

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from dbstand.cli.common import console
from dbstand.errors import UserError
from dbstand.workloads.parking.cli_run import parking_targets
from dbstand.workloads.parking.suite import CALLS_PER_PASS, ParkingClient, ScenarioVerdict, verify
from dbstand.workloads.parking.workload import _check_reachable, parking_stacks

BROKEN = ("skip-price-check", "no-idempotent-replay")


@contextlib.contextmanager
def _base_url(stack: str | None, target: str | None, url: str | None, logging: bool,
              broken: str | None) -> Iterator[str]:
    """The URL to check: given, or a service started for the check and stopped after."""
    if url is not None:
        if stack is not None or target is not None:
            raise UserError("give either --url (a running service) or --stack and --target")
        _check_listening(url)
        yield url
        return
    if stack is None:
        raise UserError("give --stack (with --target) or --url")
    if stack not in parking_stacks():
        raise UserError(f"unknown parking stack {stack!r} "
                        f"(known: {', '.join(parking_stacks())})")
    if broken is not None and broken not in BROKEN:
        raise UserError(f"--broken takes {' or '.join(BROKEN)}")
    from dbstand.workloads.parking.app import running_service

    with parking_targets(target) as targets:
        if len(targets) != 1:
            raise UserError("verify takes one --target")
        _check_reachable(targets[0], "dbstand_")
        with running_service(stack, targets[0], logging=logging, broken=broken) as service:
            yield service.base_url


def _check_listening(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise UserError(f"--url must be http://host:port, not {url!r}")
    try:
        socket.create_connection((parts.hostname, parts.port or 80), timeout=3).close()
    except OSError as exc:
        raise UserError(f"nothing answers at {url} ({exc.strerror or exc})") from None


def _table(title: str, verdicts: list[ScenarioVerdict]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, header_style="bold")
    for name, right in (("scenario", False), ("calls", True), ("passes ok", True),
                        ("result", False), ("first failure", False)):
        table.add_column(name, justify="right" if right else "left", overflow="fold")
    for v in verdicts:
        result = "[green]PASS[/]" if v.ok else ("[red]FAIL[/]" if v.runs else "not run")
        failure = "" if v.first_failure is None else escape(
            f"{v.first_failure.call}: expected {v.first_failure.expected}, "
            f"got {v.first_failure.got}")
        table.add_row(v.name, str(v.calls), f"{v.passed}/{v.runs}", result, failure)
    return table


def verify_parking(
    stack: Annotated[str | None, typer.Option(help="Service implementation to start")]
        = None,
    target: Annotated[str | None, typer.Option(
        help="Database URL for --stack; default: a temporary SQLite file")] = None,
    url: Annotated[str | None, typer.Option(
        help="Check a service already running at this http:// URL instead")] = None,
    passes: Annotated[int, typer.Option(help="Suite passes")] = 1,
    logging: Annotated[bool, typer.Option(help="Start the service with logging on")]
        = False,
    broken: Annotated[str | None, typer.Option(
        hidden=True, help="Test only: start a service that skips one rule")] = None,
) -> None:
    """parking: five scenarios, 68 calls a pass, every status and status_code checked."""
    if passes < 1:
        raise UserError("--passes must be at least 1")
    with _base_url(stack, target, url, logging, broken) as base:
        client = ParkingClient(base)
        try:
            verdicts, failure = verify(client, passes)
        finally:
            client.close()
    what = url or stack
    console.print(_table(f"parking conformance: {what} ({passes} pass(es), "
                         f"{CALLS_PER_PASS} calls each)", verdicts))
    failed = failure is not None or not all(v.ok for v in verdicts)
    if failure is not None:
        console.print(f"[red]FAIL[/] {escape(str(failure))}")
    if failed:
        console.print(f"[red]{escape(str(what))} does not conform: it would not be "
                      "measured[/]")
        raise typer.Exit(1)
    console.print(f"[green]{escape(str(what))} conforms[/]")

