"""Run a parking implementation as a real HTTP service: the interface that
`dbstand verify parking`, `dbstand run parking` and `dbstand serve parking` use.

`running_service` creates the schema and seed rows if missing (through dbstand's
ownership registry), then runs the implementation's server stack (its manifest under
stacks/, in any language) through the shared launcher: 127.0.0.1, health checked by
a real read-only call, its process tree measured, always stopped. The Python
implementations (service/) make the same choices where the spec is silent, each in
its own code:
- get_service_info: `start_ts`, `duration`, `paid_duration` (tickets) are added to
  `info` for v>=1, `balance` to `info` for v2; "never paid" = PAID_UNTIL_TS still at
  START_TS (also leave_parking's rule).
- create_reservation: v>=1 adds `price` and `info` {start_ts, duration} plus
  `paid_duration: 0` for tickets; the places check applies to new sessions only (a
  ticket holder is already inside); balance - reserved too low: `not_available`.
- cancel_reservation: an unpaid cancel finishes only a session without ticket; a
  consume row is released only while still reserved (also pay_reservation).
- account_transfer locks both accounts in user-id order (no deadlock between
  opposite transfers); stop_service on an order without user: `bad_transaction`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dbstand.errors import UserError
from dbstand.stacks.launcher import StackHandle, running_stack
from dbstand.stacks.manifest import get_manifest, stacks_for
from dbstand.targets.kinds import get_kind
from dbstand.targets.managed import password_for
from dbstand.targets.prefix import check_prefix
from dbstand.targets.sqlite.path import path_of
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.parking import db, schema
from dbstand.workloads.parking.functions import BROKEN
from dbstand.workloads.parking.http import BROKEN_ENV


def parking_stacks(kind: str | None = None) -> tuple[str, ...]:
    """Every server stack whose manifest implements parking (in any language), or
    only those whose databases include `kind`."""
    return tuple(m.name for m in stacks_for("parking") if kind is None or kind in m.databases)


def stack_databases(stack: str) -> tuple[str, ...]:
    """The target kinds a parking stack's manifest says it runs on."""
    return get_manifest(stack, "parking").databases


#: the Python implementations (dbstand's own code: the only ones with `broken` switches)
PYTHON_STACKS = ("python-raw", "python-sqlalchemy", "python-peewee")
PARKING_STACKS = PYTHON_STACKS  # the name older callers use


@dataclass
class ServiceHandle:
    """A running service, as the suite and the measurement see it."""

    stack: str
    base_url: str
    pid: int
    log_path: Path | None
    target: TargetURL
    prefix: str
    running: StackHandle | None = None

    def reseed(self) -> None:
        """Restore the seed parks' places (untimed, between batches)."""
        with closing(db.connect(self.target)) as conn:
            schema.reseed(conn, self.prefix)

    def totals(self) -> dict[str, Any]:
        """Consistency figures read from the database (schema.totals)."""
        with closing(db.connect(self.target)) as conn:
            return schema.totals(conn, self.prefix)

    def log_size(self) -> tuple[int, int]:
        """(bytes, lines) of the service log so far; (0, 0) when logging is off."""
        return self.running.log_size() if self.running is not None else (0, 0)


def _resolve(target: TargetURL | str) -> TargetURL:
    """The target as the server process needs it: password filled in, absolute path."""
    target = parse_target_url(target) if isinstance(target, str) else target
    db.check_target(target)
    if get_kind(target.kind).embedded:
        return replace(target, database=path_of(target))
    if target.password is None and (found := password_for(target)) is not None:
        return target.with_password(found)
    return target


@contextmanager
def running_service(stack: str, target: TargetURL, *, logging: bool = False,
                    port: int | None = None, threads: int = 1, prefix: str = "dbstand_",
                    broken: str | None = None,
                    log_dir: Path | None = None) -> Iterator[ServiceHandle]:
    """Create schema + seed rows if missing (through ownership), start the stack on
    127.0.0.1 (free port unless given; a port in use -> ServerError one line), wait until
    it answers, yield, and always stop it (also on error / Ctrl-C); no process is left.

    `threads`: the stack's DBSTAND_WORKERS. `broken`: a deliberate fault of the Python
    implementations (tests of the suite). `log_dir`: keep the log there.
    """
    manifest = get_manifest(stack, "parking")
    if broken is not None and broken not in BROKEN:
        raise UserError(f"unknown broken switch {broken!r} (known: {', '.join(sorted(BROKEN))})")
    if threads < 1:
        raise UserError(f"--threads must be at least 1, not {threads}")
    check_prefix(prefix)
    target = _resolve(target)
    if target.kind not in manifest.databases:
        raise UserError(f"stack {stack!r} runs on {', '.join(manifest.databases)}, "
                        f"not {target.kind}")
    with closing(db.connect(target)) as conn:
        schema.ensure_schema(conn, prefix)
    env = {BROKEN_ENV: broken} if broken else {}
    with running_stack(manifest, target=target, port=port, logging=logging, workers=threads,
                       prefix=prefix, log_dir=log_dir, extra_env=env) as running:
        yield ServiceHandle(stack=stack, base_url=running.base_url, pid=running.pid,
                            log_path=running.log_path, target=target, prefix=prefix,
                            running=running)
