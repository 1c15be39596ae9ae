"""Secrets (issue 28 item 8): pgbench, psql and the managed server's tools get the
password in a 0600 file (PGPASSFILE), never in their environment."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from tests.faults.helpers import TAG_ENV, start_cli

from dbstand.targets.managed import ServerRecord


def _pgbench_environments(tag: str) -> list[dict[str, str]]:
    """The environments of the tagged pgbench processes connecting to a server now."""
    found = []
    needle = f"{TAG_ENV}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if not argv[0].endswith(b"pgbench") or b"-h" not in argv:
                continue  # not a pgbench that connects (`pgbench --version`)
            raw = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in raw:
            found.append(dict(kv.decode().partition("=")[::2] for kv in raw if b"=" in kv))
    return found


def test_pgbench_gets_a_password_file_not_the_variable(pg: ServerRecord, tmp_path: Path
                                                       ) -> None:
    run = start_cli("run", "kv", "--target", pg.target().secret(), "--stack", "pgbench",
                    "--op", "select", "--rows", "300", "--revs", "3000",
                    "--min-iterations", "3", "--max-iterations", "3",
                    "-o", str(tmp_path / "r.jsonl"))
    seen: list[dict[str, str]] = []
    files: list[tuple[int, str]] = []
    while run.proc.poll() is None:
        for env in _pgbench_environments(run.tag):
            seen.append(env)
            if "PGPASSFILE" in env:
                try:
                    mode = os.stat(env["PGPASSFILE"]).st_mode
                    files.append((stat.S_IMODE(mode), Path(env["PGPASSFILE"]).read_text()))
                except OSError:
                    pass  # the iteration ended and its folder went
        time.sleep(0.005)
    result = run.wait(10)
    assert result.code == 0, result.stderr
    assert seen, "no pgbench process was seen running"
    assert all("PGPASSWORD" not in env for env in seen)
    assert all(env.get("PGPASSFILE") for env in seen)
    assert files and all(mode == 0o600 and text.endswith(f":{pg.password}\n")
                         for mode, text in files)
