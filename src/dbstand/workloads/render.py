"""From a results file to a rendered report: the workload that wrote the file builds
the report model (its `report` entry in workloads.ENTRIES), a renderer draws it."""

from __future__ import annotations

import errno
import importlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Sequence
from copy import deepcopy
from pathlib import Path
from typing import Any

from rich.console import Console

from dbstand.errors import UserError
from dbstand.report.breakdown import section as breakdown_section
from dbstand.report.model import Link, Report, unique_names
from dbstand.report.renderers import EXPORT_FORMATS, FORMATS, renderer
from dbstand.results.store import ResultsFile

__all__ = ["EXPORT_FORMATS", "FORMATS", "build_report", "render", "render_terminal",
           "write_exports", "write_report"]


def _builder(workload: str) -> Callable[[list[dict[str, Any]], str], Report]:
    from dbstand.workloads import ENTRIES

    entry = ENTRIES.get(workload) or ENTRIES["kv"]
    module, _, attr = entry.report.partition(":")
    build: Callable[[list[dict[str, Any]], str], Report] = getattr(
        importlib.import_module(module), attr)
    return build


def build_report(results: ResultsFile) -> Report:
    header = results.header or {}
    workload = str(header.get("workload") or next(
        (c.get("workload") for c in results.cases), "kv"))
    title = f"dbstand {workload} run {header.get('run_id', '?')} ({results.status})"
    report = _builder(workload)(results.cases, title)
    breakdown = breakdown_section(results.cases)
    if breakdown is not None:
        report.sections.append(breakdown)
    report.header, report.status, report.complete = header, results.status, results.complete
    report.warnings = [*report.warnings, *results.warnings]
    report.environment = _environment(results.cases)
    unique_names(report.measurements)
    return report


def _environment(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The first case's environment, with the packages of every case's stack (a
    package recorded with several values shows each once)."""
    envs = [c["environment"] for c in cases if c.get("environment")]
    if not envs:
        return {}
    env = dict(envs[0])
    packages: dict[str, list[str]] = {}
    for e in envs:
        for name, version in (e.get("packages") or {}).items():
            seen = packages.setdefault(str(name), [])
            if version not in (None, "") and str(version) not in seen:
                seen.append(str(version))
    if packages:
        env["packages"] = {k: ", ".join(v) for k, v in sorted(packages.items())}
    return env


def render(results: ResultsFile, format: str) -> str:
    return renderer(format)(build_report(results))


def render_terminal(results: ResultsFile, console: Console) -> None:
    from dbstand.report.renderers.terminal import print_report

    print_report(build_report(results), console)


FIFO_WAIT_S = 3.0  # how long a report waits for a reader of a FIFO named as its output


def _write_atomic(path: Path, text: str) -> None:
    """A reader sees the old file or the whole new one, never half of it. A symlink
    stays a symlink (its target is written); a device, FIFO or other file that is not
    a regular one is written through, never replaced."""
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        _write_through(path, real, text, mode)
        return
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, (mode if mode is not None else 0o666 & ~umask) & 0o7777)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, real)
    except BaseException as exc:
        os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk: one line, the results file is safe
            raise UserError(f"cannot write {path}: {exc.strerror}") from None
        raise


def _rebased(report: Report, results_dir: Path, out_dir: Path) -> Report:
    """The report with its file links (flame graphs beside the results) made relative
    to the folder the rendered file goes to."""
    if results_dir.resolve() == out_dir.resolve():
        return report
    copy = deepcopy(report)
    for table in copy.tables():
        for row in table.links:
            for key, links in row.items():
                row[key] = [Link(link.label, os.path.relpath(results_dir / link.href, out_dir))
                            for link in links]
    return copy


def _write_through(path: Path, real: Path, text: str, mode: int) -> None:
    """Write into a device or FIFO as it is (a FIFO waits a little for a reader)."""
    if stat.S_ISDIR(mode):
        raise UserError(f"cannot write {path}: it is a folder")
    data = text.encode("utf-8")
    try:
        if stat.S_ISFIFO(mode):
            fd = _open_fifo(path, real)
        else:
            fd = os.open(real, os.O_WRONLY | os.O_NOCTTY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def _open_fifo(path: Path, real: Path) -> int:
    """A FIFO opened for writing, once a reader has it open (at most FIFO_WAIT_S)."""
    deadline = time.monotonic() + FIFO_WAIT_S
    while True:
        try:
            fd = os.open(real, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: nobody reads it yet
                raise
            if time.monotonic() >= deadline:
                raise UserError(f"cannot write {path}: it is a FIFO and nothing read from it "
                                f"within {FIFO_WAIT_S:g} s") from None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def write_report(results: ResultsFile, path: Path, format: str = "html") -> None:
    write_exports(results, [(format, path)])


def write_exports(results: ResultsFile, exports: Sequence[tuple[str, Path]]) -> None:
    """Render every export first, then write each atomically: a renderer that fails
    leaves no file half-written and no export of the set written."""
    if not exports:
        return
    report = build_report(results)
    texts = [(path, renderer(format)(_rebased(report, results.path.parent, path.parent)))
             for format, path in exports]
    for path, text in texts:
        _write_atomic(path, text)
