"""The `--cluster` option as commands declare it, and the calls they make with it.

Light to import (no Dask, no load engine): commands import it at start-up, and the
heavy parts load only when `--cluster` is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from dbstand.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

    from dbstand.distributed.httpload import ClusterLoad


def _check_cluster(value: str | None) -> str | None:
    """Refuse a malformed value before anything runs."""
    if value is not None:
        from dbstand.distributed.spec import parse_cluster

        try:
            parse_cluster(value)
        except UserError as exc:
            raise typer.BadParameter(str(exc), param_hint="--cluster") from None
    return value


ClusterOption = Annotated[str | None, typer.Option(
    "--cluster", metavar="local:N|tcp://HOST:PORT|tls://HOST:PORT", callback=_check_cluster,
    help="Spread the load over a Dask cluster: local:N (N worker processes on this host, "
         "loopback only) or a running scheduler, tcp://HOST:PORT or "
         "tls://HOST:PORT?ca=FILE&cert=FILE&key=FILE; each worker runs its share of the "
         "connections and the latency histograms merge exactly (docs/distributed.md)")]


def print_cluster(load: ClusterLoad, console: Console) -> None:
    """Each worker's figures and the merged row, after the usual summary."""
    from dbstand.distributed.httpload import print_workers

    print_workers(load, console)


def http_on_cluster(cluster: str, url: str, connections: int, requests: int | None,
                    duration: float | None, rate: float | None,
                    settings: dict[str, Any]) -> ClusterLoad:
    """`dbstand http --cluster`: open the cluster, run the load from every worker,
    close the cluster; `settings` are the engine's keyword options (per worker)."""
    from dbstand.console import err_console
    from dbstand.distributed.httpload import run_http
    from dbstand.distributed.session import cluster_session

    with cluster_session(cluster) as session:
        for note in session.notes:
            err_console.print(f"note: {note}", highlight=False)
        return run_http(session, url, connections=connections, requests=requests,
                        duration=duration, rate=rate, **settings)
