"""Reading and writing results files.

Each record is one line, written with a single `write` on an O_APPEND descriptor and
fsynced: a crash can lose at most the case in progress, never corrupt a finished one.
The file is created, exclusively (O_EXCL: never an existing file, never one another
run is writing), before any measurement, with the run's first record in it; an
output that cannot be written is one clear error before anything is measured.

A write that fails later (a full disk) never leaves a torn line: the file is cut back
to its last whole record, and the record that could not be written goes to a file in
the temporary folder (or, failing that, to stderr) so that no measurement is lost
(`ResultsWriter.rescue`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbstand.errors import UserError
from dbstand.results.schema import SCHEMA


class ResultsWriteError(UserError):
    """The results file could not be written (permissions, a full disk...)."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def check_output_path(path: Path, option: str = "--output") -> None:
    """Refuse, before a run measures anything, an output path that cannot be written:
    a folder, a folder that cannot be made, or one this user may not write to."""
    if path.is_dir():
        raise UserError(f"{option} {path} is a folder: give a file name")
    folder = path.parent if str(path.parent) else Path(".")
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{option} {path}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: cannot write in folder {existing} "
                        f"({_why_not_writable(existing)})")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"{option} {path}: the file is not writable "
                        f"({_why_not_writable(path)})")
    # access() says yes to root everywhere: make the folder and a file in it for real
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write there ({exc.strerror})") from None


def check_distinct_outputs(outputs: Sequence[tuple[str, Path]]) -> None:
    """Refuse, before anything is measured, two outputs of one command that name the
    same file (through a symlink or a hard link too): the later write would destroy the
    earlier one, the run's own measurements included."""
    seen: dict[object, str] = {}
    for option, path in outputs:
        named = f"{option} {path}"
        keys: list[object] = [os.path.realpath(path)]
        with contextlib.suppress(OSError):
            st = os.stat(path)
            keys.append((st.st_dev, st.st_ino))
        for key in keys:
            if key in seen:
                raise UserError(f"{named} names the same file as {seen[key]}: one would "
                                "overwrite the other; give each its own path")
        for key in keys:
            seen[key] = named


def _why_not_writable(path: Path) -> str:
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "Read-only file system" if read_only else "permission denied"


class ResultsWriter:
    """Appends records to a new results file."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None
        self.saved = 0          # records written whole
        self.broken = False     # a write failed: no more writes

    def open(self) -> None:
        """Create the file (exclusively); one clear error if that is impossible."""
        if self.path.is_dir():
            raise ResultsWriteError(f"results file {self.path} is a folder: choose another "
                                    "--output")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsWriteError(f"cannot create the results folder {self.path.parent}: "
                                    f"{_reason(exc)}") from None
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
                              0o644)
        except FileExistsError:
            raise ResultsWriteError(f"results file {self.path} already exists: choose "
                                    "another --output") from None
        except OSError as exc:
            raise ResultsWriteError(f"cannot create results file {self.path}: "
                                    f"{_reason(exc)}") from None

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record whole, or raise ResultsWriteError leaving the file as it was
        (a file that has no record yet is removed)."""
        if self.broken:
            raise ResultsWriteError(f"results file {self.path} could not be written earlier")
        if self.fd is None:
            self.open()
        assert self.fd is not None
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        offset = os.lseek(self.fd, 0, os.SEEK_END)
        try:
            written = os.write(self.fd, line)
            if written != len(line):
                raise OSError(28, os.strerror(28))  # a short write: the disk is full
            os.fsync(self.fd)
        except OSError as exc:
            self.broken = True
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, offset)  # no torn line
            if self.saved == 0:
                self.close()
                with contextlib.suppress(OSError):
                    self.path.unlink()  # no empty results file left behind
            raise ResultsWriteError(
                f"cannot write results file {self.path}: {_reason(exc)} "
                f"({self.saved} record(s) saved in it before)") from None
        self.saved += 1

    def rescue(self, records: list[dict[str, Any]], run_id: str) -> str:
        """Save records that the results file could not take: to a file in the temporary
        folder, else to stderr. Returns where they went, for the error message."""
        text = "".join(json.dumps(r, separators=(",", ":"), default=str) + "\n"
                       for r in records)
        name: str | None = None
        try:
            fd, name = tempfile.mkstemp(prefix=f"dbstand-unsaved-{run_id}-", suffix=".jsonl")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            return name
        except OSError:
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name)
            sys.stderr.write(text)
            sys.stderr.flush()
            return "stderr (above)"

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@dataclass
class ResultsFile:
    path: Path
    header: dict[str, Any] | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    footer: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.footer is not None and self.footer.get("status") == "complete"

    @property
    def status(self) -> str:
        if self.footer is None:
            return "incomplete (no end record: crashed or still running)"
        return str(self.footer.get("status"))

    @property
    def workload(self) -> str | None:
        """The workload of the run (kv, batch, http...): the header's, else the cases'
        when they agree; None when unknown or mixed."""
        if self.header and self.header.get("workload"):
            return str(self.header["workload"])
        names = {str(c.get("workload")) for c in self.cases if c.get("workload")}
        return names.pop() if len(names) == 1 else None


def read_results(path: Path) -> ResultsFile:
    """Parse a results file; a torn last line (crash mid-write) becomes a warning.

    Records of another schema version are refused (a field may mean something else
    there), and so is anything that is not a results file, each in one line."""
    if path.is_dir():
        raise UserError(f"{path} is a folder: give a results file (.jsonl) in it")
    if not path.exists():
        raise UserError(f"no such results file: {path}")
    result = ResultsFile(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a dbstand results file (not UTF-8 text)") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {_reason(exc)}") from None
    family = SCHEMA.split("/")[0]
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                result.warnings.append(f"line {number} is torn (crash while writing): ignored")
                continue
            raise UserError(f"{path}:{number}: not a dbstand results file (bad JSON)") from None
        schema = str(record.get("schema", "")) if isinstance(record, dict) else ""
        if not schema.startswith(family + "/"):
            raise UserError(f"{path}:{number}: not a dbstand results record")
        if schema != SCHEMA:
            raise UserError(f"{path}:{number}: written in results schema {schema}; this "
                            f"dbstand reads {SCHEMA} only (use the dbstand version that "
                            "wrote it)")
        kind = record.get("type")
        if kind == "run":
            result.header = record
        elif kind == "run_end":
            result.footer = record
        elif kind == "case":
            result.cases.append(record)
    if result.header is None and not result.cases:
        raise UserError(f"{path}: no dbstand records in it")
    return result
