"""`dbstand server up|down|status`: throwaway local database servers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dbstand.cli.output import FormatOption, show
from dbstand.console import check_port, console, err_console
from dbstand.errors import ServerError, UserError
from dbstand.targets.kinds import managed_kinds
from dbstand.targets.managed import (
    CorruptRecord,
    ManagedServer,
    ServerRecord,
    all_records,
    forget_record,
    load_record,
    record_alive,
    save_record,
)

app = typer.Typer(help="Start, stop and list throwaway database servers on 127.0.0.1 "
                       "(or --bind in a network namespace of yours).",
                  no_args_is_help=True)

def _server_class(kind: str) -> type[ManagedServer]:
    kinds = managed_kinds()
    if kind not in kinds:
        names = sorted({k.name for k in kinds.values()})
        raise UserError(f"no managed server for {kind!r} (available: {', '.join(names)})")
    server: type[ManagedServer] = kinds[kind].load("managed")
    return server


@app.command("up")
def up(kind: Annotated[str, typer.Argument(help="postgresql, mysql (MariaDB) or tarantool")],
       port: Annotated[int | None, typer.Option(help="Port (default: a free one)")] = None,
       bind: Annotated[str, typer.Option(
           help="Address to listen on: loopback, or an address this process owns inside "
                "a network namespace of yours (`ip netns exec NS dbstand server up ...`; "
                "docs/distributed.md)")] = "127.0.0.1",
       ) -> None:
    """Start a throwaway server and print the URL to use (the password stays in
    dbstand's state dir; dbstand finds it for URLs pointing at this server)."""
    check_port(port)
    cls = _server_class(kind)
    existing = load_record(cls.kind)
    if existing and record_alive(existing):
        raise UserError(f"a managed {cls.kind} server is already running at {existing.url} "
                        f"(`dbstand server down {cls.kind}` first)")
    if existing:  # a stale record (the server died, the machine rebooted): clean it up
        _clear_stale(cls, existing)
    server = cls(port=port, bind=bind)
    with console.status(f"starting {cls.kind} on {server.bind}:{server.port}..."):
        record = server.start()
    try:
        save_record(record)
    except BaseException:
        server.stop()  # no record, no server: `server down` could not find it
        raise
    server.release_claim()  # the record keeps the server from now on
    console.print(f"{cls.kind} is up: [bold]{record.url}[/]")
    console.print(f"  pid {record.pid}, data in {record.base_dir}; password kept in "
                  "dbstand's state dir (`dbstand server status --show-password` prints it)")
    shown = [k for k in ("wal_mode", "readahead", "engine", "temporary_spaces")
             if k in record.settings]
    if shown:  # Tarantool: the kv study's settings, recorded with every result
        console.print("  settings: " + ", ".join(f"{k}={record.settings[k]}" for k in shown),
                      highlight=False)


def _clear_stale(cls: type[ManagedServer], record: ServerRecord) -> None:
    """Remove a dead server's data folder and record (no process is signalled)."""
    try:
        cls.stop_record(record)
    except ServerError as exc:
        raise ServerError(f"could not clean up the stopped {cls.kind} server's data in "
                          f"{record.base_dir}: {exc}") from None
    forget_record(cls.kind)
    folder = Path(record.base_dir)
    fate = ("was removed" if not folder.exists() else
            "was left alone (not a folder dbstand made)" if not folder.name.startswith(
                "dbstand-") else "could not be removed entirely")
    console.print(f"the earlier {cls.kind} server (pid {record.pid}) was no longer running: "
                  f"its record was removed; its data folder {record.base_dir} {fate}")


@app.command("down")
def down(kind: Annotated[str, typer.Argument(
        help="postgresql, mysql (MariaDB) or tarantool")]) -> None:
    """Stop the server and delete its data."""
    cls = _server_class(kind)
    try:
        record = load_record(cls.kind)
    except CorruptRecord as exc:
        forget_record(cls.kind)
        console.print(f"the record {exc.path} was corrupt: removed it. If its server still "
                      f"runs, stop it yourself (its data is in a /tmp/dbstand-{cls.kind}-* "
                      "folder)")
        return
    if record is None:
        raise UserError(f"no managed {cls.kind} server is running")
    if not record_alive(record):
        # its pid may now be any other program's: never signal it, only clean up
        _clear_stale(cls, record)
        return
    try:
        cls.stop_record(record)
    except ServerError as exc:
        raise ServerError(f"could not stop {cls.kind} (pid {record.pid}): {exc}") from None
    forget_record(cls.kind)
    console.print(f"{cls.kind} stopped and its data removed")


@app.command("status")
def status(show_password: Annotated[bool, typer.Option(
        help="Also print each server's password")] = False,
        format: FormatOption = "table") -> None:
    """List managed servers and whether they are alive."""
    corrupt: list[CorruptRecord] = []
    records = all_records(corrupt)
    for bad in corrupt:
        err_console.print(f"warning: {bad}", highlight=False)
    if not records and format == "table":
        console.print("no managed servers")
        return
    rows: list[dict[str, Any]] = []
    for r in records:
        row: dict[str, Any] = {"kind": r.kind, "url": r.url, "pid": r.pid,
                               "alive": record_alive(r), "data_dir": r.base_dir}
        if show_password:
            row["password"] = r.password
        rows.append(row)
    show("managed servers", rows, format)
