"""`dbstand verify parking`: the conformance suite against a stack or a running URL.

With a database (`--target`, also beside `--url`), the service's totals are read
before and after the passes and must be what the passes imply (no lost update, no
stray write). Exit 0 when every scenario passed, 1 when one failed (a stack that fails
is not measured by `dbstand run parking`), 2 for a user mistake.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from dbstand.console import console
from dbstand.errors import UserError
from dbstand.targets.prefix import DEFAULT_PREFIX, check_prefix
from dbstand.targets.url import TargetURL
from dbstand.workloads.parking.cli_run import parking_targets
from dbstand.workloads.parking.functions import BROKEN as BROKEN_SWITCHES
from dbstand.workloads.parking.suite import (
    CALLS_PER_PASS,
    ParkingClient,
    ScenarioVerdict,
    totals_mismatch,
    verify,
)
from dbstand.workloads.parking.suite.client import DEFAULT_TIMEOUT_S
from dbstand.workloads.parking.workload import _check_reachable, parking_stacks

#: every deliberate fault a Python implementation can be started with (tests only)
BROKEN = tuple(sorted(BROKEN_SWITCHES))


@contextlib.contextmanager
def _checked(stack: str | None, target: str | None, url: str | None, logging: bool,
             broken: str | None, prefix: str) -> Iterator[tuple[str, TargetURL | None]]:
    """(the URL to check, the database to read totals from or None): a given URL (with
    its database when --target is given too), or a service started for the check and
    stopped after."""
    if url is not None:
        if stack is not None:
            raise UserError("give either --url (a running service) or --stack")
        if broken is not None:
            raise UserError("--broken starts a faulty service: it needs --stack, not --url")
        _check_listening(url)
        if target is None:
            yield url, None
            return
        with parking_targets(target) as targets:
            if len(targets) != 1:
                raise UserError("verify takes one --target")
            _check_reachable(targets[0], prefix)
            yield url, targets[0]
        return
    if stack is None:
        raise UserError("give --stack (with --target) or --url (with --target to check "
                        "its totals)")
    if stack not in parking_stacks():
        raise UserError(f"unknown parking stack {stack!r} "
                        f"(known: {', '.join(parking_stacks())})")
    if broken is not None and broken not in BROKEN:
        raise UserError(f"--broken takes one of {', '.join(BROKEN)}")
    from dbstand.workloads.parking.app import running_service

    with parking_targets(target) as targets:
        if len(targets) != 1:
            raise UserError("verify takes one --target")
        _check_reachable(targets[0], prefix)
        with running_service(stack, targets[0], logging=logging, broken=broken,
                             prefix=prefix) as service:
            yield service.base_url, service.target


def _totals(target: TargetURL, prefix: str) -> dict[str, Any]:
    """The service's totals (schema.totals); a UserError when its tables are missing."""
    from contextlib import closing

    from dbstand.targets.managed import password_for
    from dbstand.workloads.parking import db, schema

    if target.password is None and (found := password_for(target)) is not None:
        target = target.with_password(found)
    with closing(db.connect(target)) as conn:
        try:
            return schema.totals(conn, prefix)
        except Exception as exc:  # drivers raise their own "no such table"
            raise UserError(f"cannot read the parking tables {prefix}t_* on "
                            f"{target.redacted()}: {' '.join(str(exc).split())} (is "
                            "--prefix the service's?)") from None


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
    prefix: Annotated[str, typer.Option(
        help="Prefix of the service's tables (to start it with, or to read the totals of "
             "a --url service)")] = DEFAULT_PREFIX,
    timeout: Annotated[float, typer.Option(
        help="Seconds one call may take before it fails (a service that stops answering "
             "fails each scenario after this)")] = DEFAULT_TIMEOUT_S,
    broken: Annotated[str | None, typer.Option(
        hidden=True, help="Test only: start a Python service with one deliberate fault "
                          f"({', '.join(BROKEN)})")] = None,
) -> None:
    """parking: five scenarios, 68 calls a pass, every status and status_code checked;
    with a database, the totals the passes must leave."""
    if passes < 1:
        raise UserError("--passes must be at least 1")
    if not 0 < timeout <= 3600:
        raise UserError(f"--timeout must be more than 0 and at most 3600 seconds (got "
                        f"{timeout:g})")
    check_prefix(prefix)
    wrong: dict[str, tuple[Any, Any]] | None = None
    with _checked(stack, target, url, logging, broken, prefix) as (base, database):
        before = _totals(database, prefix) if database is not None else None
        client = ParkingClient(base, timeout)
        try:
            verdicts, failure = verify(client, passes)
        finally:
            client.close()
        complete = failure is None and all(v.ok for v in verdicts)
        if before is not None and database is not None and complete:
            wrong = totals_mismatch(before, _totals(database, prefix), passes)
    what = url or stack
    console.print(_table(f"parking conformance: {what} ({passes} pass(es), "
                         f"{CALLS_PER_PASS} calls each)", verdicts))
    failed = failure is not None or not all(v.ok for v in verdicts) or bool(wrong)
    if failure is not None:
        console.print(f"[red]FAIL[/] {escape(str(failure))}")
    if wrong:
        console.print("[red]FAIL[/] totals after the passes are not what they imply: "
                      + escape(", ".join(f"{k} expected {exp} got {got}"
                                         for k, (exp, got) in wrong.items())))
    elif wrong is not None:
        console.print(f"totals: [green]PASS[/] (rows, money and places after {passes} "
                      "pass(es) are what they imply)")
    elif before is None and not failed:
        console.print("totals: not checked (give --target to read them)")
    if failed:
        console.print(f"[red]{escape(str(what))} does not conform: it would not be "
                      "measured[/]")
        raise typer.Exit(1)
    console.print(f"[green]{escape(str(what))} conforms[/]")

