"""`dbstand stack list|build|start|check|deps`: for stack authors and users.

`start` runs a stack in the foreground until Ctrl-C, as `serve parking` does; `check`
starts it, verifies its answers by each workload's rules, and stops it (exit 1 on a
failed check, for CI).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from dbstand.cli.output import FormatOption, show
from dbstand.console import console
from dbstand.errors import UserError

if TYPE_CHECKING:
    from dbstand.targets.url import TargetURL

app = typer.Typer(help="Server stacks (stacks/<language>/<name>/stack.toml): list, build, "
                       "start, check.", no_args_is_help=True)

Name = Annotated[str, typer.Argument(help="Stack name (see `dbstand stack list`)")]
Target = Annotated[str | None, typer.Option(help="Database URL the stack reads; default: "
                                                 "the managed server of its first kind")]
Prefix = Annotated[str, typer.Option(help="Prefix of the tables dbstand owns")]


@app.command("list")
def list_stacks(workload: Annotated[str | None, typer.Option(
        help="Only the stacks implementing this workload")] = None,
        format: FormatOption = "table") -> None:
    """Every server stack with its labels and whether its packages are installed."""
    from dbstand.profiles.runtimes import profiler_for
    from dbstand.stacks.build import missing_debian
    from dbstand.stacks.manifest import all_manifests

    manifests = all_manifests().values()
    known = sorted({w for m in manifests for w in m.workloads})
    if workload is not None and workload not in known:
        raise UserError(f"no stack implements workload {workload!r} (known: "
                        f"{', '.join(known)})")
    rows: list[dict[str, Any]] = []
    for m in manifests:
        if workload is not None and not m.implements(workload):
            continue
        missing = missing_debian(m.debian)
        rows.append({"stack": m.name, "workloads": list(m.workloads), "language": m.language,
                     "framework": m.framework, "server": m.web_server, "orm": m.orm,
                     "concurrency": m.concurrency, "databases": list(m.databases),
                     "profiler": profiler_for(m.language, m.name),
                     "installed": not missing, "missing": list(missing)})
    if format == "table":
        for row in rows:
            if row["missing"]:
                row["installed"] = f"[yellow]needs {' '.join(row['missing'])}[/]"
    show("server stacks", rows, format, ("stack", "workloads", "language", "framework",
                                         "server", "orm", "concurrency", "databases",
                                         "profiler", "installed"))


@app.command("deps")
def deps(debian: Annotated[bool, typer.Option(help="Print the Debian packages of every "
                                                    "stack, one line")] = True) -> None:
    """What the stacks need installed (for install scripts)."""
    from dbstand.stacks.manifest import all_manifests

    packages = sorted({p for m in all_manifests().values() for p in m.debian})
    print(" ".join(packages))


@app.command("build")
def build(name: Name) -> None:
    """Install the stack's packages and build it (cached by a hash of its sources)."""
    from dbstand.stacks.build import build_dir, ensure_built
    from dbstand.stacks.manifest import get_manifest

    manifest = get_manifest(name)
    cached = build_dir(manifest).is_dir()
    started = time.monotonic()
    with console.status(f"building {name}..."):
        folder = ensure_built(manifest)
    how = "already built" if cached else f"built in {time.monotonic() - started:.1f} s"
    console.print(f"{name}: {how}: {folder}")


def _target_for(manifest_databases: tuple[str, ...], text: str | None) -> TargetURL | None:
    """The target URL a stack reads: the one given, or a running managed server."""
    from dbstand.targets.managed import load_record
    from dbstand.targets.url import parse_target_url

    if text is not None:
        url = parse_target_url(text)
        if url.kind not in manifest_databases:
            runs_on = (f"runs on {', '.join(manifest_databases)}" if manifest_databases
                       else "reads no database (drop --target)")
            raise UserError(f"this stack {runs_on}, not {url.kind}: its manifest says so")
        return url
    for kind in manifest_databases:
        record = load_record(kind)
        if record is not None:
            return record.target()
    if manifest_databases:
        raise UserError(f"give --target (a {' or '.join(manifest_databases)} URL), or start "
                        f"one with `dbstand server up {manifest_databases[0]}`")
    return None


@app.command("start")
def start(name: Name, target: Target = None,
          port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a "
                                                        "free one)")] = None,
          logging: Annotated[bool, typer.Option("--logging/--no-logging")] = False,
          workers: Annotated[int | None, typer.Option(help="Worker processes/threads")]
          = None,
          workload: Annotated[str | None, typer.Option(help="Prepare this workload's data "
                                                            "(default: the stack's first)")]
          = None,
          prefix: Prefix = "dbstand_") -> None:
    """Run the stack in the foreground until Ctrl-C."""
    from dbstand.console import check_port
    from dbstand.stacks.launcher import running_stack
    from dbstand.stacks.manifest import get_manifest
    from dbstand.workloads import served_workload

    check_port(port)
    manifest = get_manifest(name)
    if workload is not None and not manifest.implements(workload):
        raise UserError(f"stack {name!r} implements {', '.join(manifest.workloads)}, not "
                        f"{workload}")
    served = served_workload(workload or manifest.workloads[0])
    url = _target_for(manifest.databases, target)
    if url is not None:
        served.prepare(url, prefix)
    with running_stack(manifest, target=url, port=port, logging=logging, workers=workers,
                       prefix=prefix, static_dir=served.static_dir) as handle:
        console.print(f"{name} is serving on [bold]{handle.base_url}[/] (pid {handle.pid}); "
                      "Ctrl-C stops it")
        while handle.alive():
            time.sleep(0.5)
        raise UserError(f"stack {name!r} exited on its own")


@app.command("check")
def check(name: Name, target: Target = None, prefix: Prefix = "dbstand_") -> None:
    """Start the stack, verify its answers by each of its workloads' rules, stop it."""
    from dbstand.stacks.launcher import running_stack
    from dbstand.stacks.manifest import get_manifest
    from dbstand.workloads import served_workload

    manifest = get_manifest(name)
    url = _target_for(manifest.databases, target)
    failed = 0
    for workload in manifest.workloads:
        served = served_workload(workload)
        if url is not None:
            served.prepare(url, prefix)
        with running_stack(manifest, target=url, prefix=prefix,
                           static_dir=served.static_dir) as handle:
            checks = served.verify(handle, url, prefix)
        table = Table(title=f"{name}: {workload}")
        for col in ("test", "result", "detail"):
            table.add_column(col, overflow="fold")
        for c in checks:
            table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
        console.print(table)
        failed += sum(1 for c in checks if not c.ok)
    if failed:
        console.print(f"[red]{failed} check(s) failed[/]")
        raise typer.Exit(1)
