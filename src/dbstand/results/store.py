"""Reading and writing results files.

Each record is one line, written with a single `write` on an O_APPEND descriptor and
fsynced: a crash can lose at most the case in progress, never corrupt a finished one.
The file is created only when the first record is ready (after preflight checks), and
an existing file is never overwritten.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbstand.errors import UserError
from dbstand.results.schema import SCHEMA


class ResultsWriter:
    """Appends records to a new results file."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
                              0o644)
        except FileExistsError:
            raise UserError(f"results file {self.path} already exists: choose another "
                            "--output") from None

    def append(self, record: dict[str, Any]) -> None:
        if self.fd is None:
            self.open()
        assert self.fd is not None
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        written = os.write(self.fd, line)
        if written != len(line):
            raise OSError(f"short write to {self.path}")
        os.fsync(self.fd)

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


def read_results(path: Path) -> ResultsFile:
    """Parse a results file; a torn last line (crash mid-write) becomes a warning."""
    if not path.exists():
        raise UserError(f"no such results file: {path}")
    result = ResultsFile(path)
    lines = path.read_text().splitlines()
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
        if not isinstance(record, dict) or not str(record.get("schema", "")).startswith(
                SCHEMA.split("/")[0]):
            raise UserError(f"{path}:{number}: not a dbstand results record")
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
