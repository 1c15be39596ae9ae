"""pgbench, PostgreSQL's own C benchmark client, as dbstand's limit rows run it: where
to find it, its version, one run with the password in a 0600 password file
(PGPASSFILE: never on its command line nor in its environment), its summary, its
per-transaction log and its per-statement latencies (-r)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from dbstand.errors import CaseFailed, MissingDependencyError, UserError
from dbstand.targets.managed import password_for
from dbstand.targets.postgresql.passfile import write_passfile
from dbstand.targets.url import TargetURL

TIMEOUT_S = 600

_PROCESSED = re.compile(r"number of transactions actually processed: (\d+)")
_FAILED = re.compile(r"number of failed transactions: (\d+)")
_TPS = re.compile(r"tps = ([\d.]+) \((?:without initial connection time|"
                  r"excluding connections establishing)\)")
_LATENCY = re.compile(r"latency average = ([\d.]+) ms")
_SCRIPT = re.compile(r"^SQL script (\d+): .*$")
_SCRIPT_TX = re.compile(r"^ - (\d+) transactions")
_STATEMENT = re.compile(r"^\s+([\d.]+)\s+(\d+)\s+(\S.*)$")


def find_pgbench() -> Path:
    """$DBSTAND_PGBENCH, else the pgbench beside the PostgreSQL server binaries, else PATH."""
    override = os.environ.get("DBSTAND_PGBENCH")
    if override and os.access(override, os.X_OK):
        return Path(override)
    with contextlib.suppress(UserError):
        from dbstand.targets.postgresql.managed import find_bin_dir

        candidate = find_bin_dir() / "pgbench"
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("pgbench")
    if not found:
        raise MissingDependencyError(
            "stack 'pgbench' needs the pgbench program: install Debian's postgresql "
            "package (or postgresql-contrib), or set DBSTAND_PGBENCH")
    return Path(found)


def pgbench_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                         timeout=30)
    return out.stdout.strip() or out.stderr.strip()


def parse_summary(text: str) -> dict[str, float]:
    """pgbench's end-of-run summary: processed, failed, tps, latency_ms."""
    out: dict[str, float] = {}
    for key, pattern in (("processed", _PROCESSED), ("failed", _FAILED), ("tps", _TPS),
                         ("latency_ms", _LATENCY)):
        match = pattern.search(text)
        if match:
            out[key] = float(match.group(1))
    return out


def parse_statements(text: str) -> tuple[dict[int, int], list[tuple[int, float, str]]]:
    """From `-r` output: transactions per script (0-based) and, per command in order,
    (script, mean latency ms, command text). With one script pgbench prints no
    `SQL script` header: everything is script 0, its transactions the processed count."""
    transactions: dict[int, int] = {}
    statements: list[tuple[int, float, str]] = []
    script = 0
    in_table = False
    for line in text.splitlines():
        m = _SCRIPT.match(line)
        if m:
            script, in_table = int(m.group(1)) - 1, False
            continue
        m = _SCRIPT_TX.match(line)
        if m:
            transactions[script] = int(m.group(1))
            continue
        if "statement latencies in milliseconds" in line:
            in_table = True
            continue
        m = _STATEMENT.match(line) if in_table else None
        if m:
            statements.append((script, float(m.group(1)), m.group(3)))
        elif in_table and line.strip() and not line.startswith(" "):
            in_table = False
    if not transactions:
        summary = parse_summary(text)
        if "processed" in summary:
            transactions[0] = int(summary["processed"])
    return transactions, statements


def read_latencies(folder: Path, prefix: str) -> list[int]:
    """Per-transaction latencies (ns) from pgbench's `-l` log files
    (`client_id transaction_no time_us script_no epoch epoch_us` per line)."""
    samples: list[int] = []
    for path in folder.glob(f"{prefix}.*"):
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[2].isdigit():
                samples.append(int(fields[2]) * 1000)
        path.unlink()
    return samples


def connection_args(target: TargetURL, folder: Path) -> tuple[list[str], dict[str, str]]:
    """pgbench's -h/-p/-U arguments and its environment; a password goes into a 0600
    file in `folder` (a private temp dir) named by PGPASSFILE."""
    argv = ["-h", target.host or "127.0.0.1", "-p", str(target.port or 5432)]
    if target.user:
        argv += ["-U", target.user]
    env = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    env.update(PGCONNECT_TIMEOUT="10", PGAPPNAME="dbstand-pgbench")
    password = target.password or password_for(target)
    if password:
        env.update(write_passfile(folder, password))
    return argv, env


def run_pgbench(argv: list[str], env: dict[str, str]) -> tuple[dict[str, float], str]:
    """One pgbench process to its end: its summary and stdout; failure -> CaseFailed."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CaseFailed(f"pgbench did not finish within {TIMEOUT_S} s") from None
    summary = parse_summary(proc.stdout)
    if proc.returncode != 0 or "tps" not in summary:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no output"]
        raise CaseFailed(f"pgbench failed (exit {proc.returncode}): {lines[-1]}")
    if summary.get("failed"):
        raise CaseFailed(f"pgbench: {summary['failed']:.0f} transactions failed")
    return summary, proc.stdout
