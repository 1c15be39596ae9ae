"""Shared fixtures: real servers started through dbstand's own managed servers."""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pytest

from dbstand.targets.managed import ServerRecord
from dbstand.targets.postgresql.managed import ManagedPostgres
from dbstand.targets.url import TargetURL

SHARED_ENV = "DBSTAND_TESTS_SHARED"  # the folder a pytest-xdist run's workers share
_shared_key = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, each worker gets a temporary folder of its own.

    Throwaway servers and stacks make their folders with `tempfile`; tests that check
    nothing was left behind look at the temporary folder before and after, which is only
    meaningful when no other worker writes there at the same time. The controller makes
    one folder for the run (the workers inherit its environment); each worker's folder
    and the locks of `pytest_runtest_protocol` below are in it, and it goes with the run.
    """
    # A shell without job control starts a background command (`make test &`, nohup)
    # with SIGINT ignored, and the dbstand processes the tests start inherit that: the
    # tests that stop a run with Ctrl-C would wait out their timeouts. Python's own
    # handler here makes each child start with the default one again (exec resets it).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = os.environ.get(SHARED_ENV)
    if worker is None:
        if config.getoption("numprocesses", None) and shared is None:
            folder = Path(tempfile.mkdtemp(prefix="dbstand-tests-"))
            folder.chmod(0o755)  # the servers' own users (postgres, mysql) pass through
            os.environ[SHARED_ENV] = str(folder)
            config.stash[_shared_key] = folder
        return
    if shared is None:
        return
    folder = Path(shared) / worker
    folder.mkdir(exist_ok=True)
    # like /tmp itself: the servers' own users write their files there too
    folder.chmod(0o1777)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_shared_key, None)
    if folder is not None:  # the controller, after every worker has finished
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[SHARED_ENV]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under pytest-xdist, a test marked `exclusive` (it compares figures measured on
    this machine) runs while no other worker runs a test.

    Every test holds a shared lock on one file for its whole protocol, an exclusive test
    holds it exclusively from the end of its setup to its end. The whole protocol, not
    the test function: a module or session fixture is set up inside its first test's
    setup and torn down in its last test's teardown, and such a fixture can be heavy (a
    profiled run of four stacks), so it must not run beside an exclusive test. A second
    lock, the gate, keeps an exclusive test from waiting forever: flock gives a waiting
    exclusive lock no priority, so the other worker's next test could always take the
    shared lock first. A test passes the gate to take its lock; an exclusive test holds
    the gate from before it waits until it is done. So no test starts once an exclusive
    one holds the gate, and while the others finish the tests they are in, the exclusive
    test sets up its fixtures (servers, stacks: nothing it measures) under a shared lock
    beside them: the wait for them leaves no core idle that its setup could use. Then it
    takes the lock exclusively (`_take_exclusively`, once its setup passed). Exclusive
    tests in a row on one worker (a file of them) keep both between them: the other
    workers drain their tests once for the row, not once a test.
    """
    shared = os.environ.get(SHARED_ENV)
    if shared is None or "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    exclusive = _is_exclusive(item)
    if _kept:   # the previous test was exclusive, and so is this one (its nextitem)
        gate, lock, alone = _kept.pop()
    else:
        gate, lock = (os.open(Path(shared) / name, os.O_WRONLY | os.O_CREAT, 0o644)
                      for name in ("gate", "lock"))
        # the wait is outside every phase, so outside its file's weight (_file_seconds);
        # the controller adds the waits up for the summary (_LOCK_WAIT)
        started = time.monotonic()
        fcntl.flock(gate, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        fcntl.flock(lock, fcntl.LOCK_SH)
        if not exclusive:
            fcntl.flock(gate, fcntl.LOCK_UN)
        alone = False
        item.user_properties.append((_LOCK_WAIT, time.monotonic() - started))
    if exclusive and not alone:
        _pending[item.nodeid] = (item, lock)
    keep = False
    try:
        yield
        keep = exclusive and _is_exclusive(nextitem)
    finally:
        alone = alone or _pending.pop(item.nodeid, None) is None
        if keep:
            _kept.append((gate, lock, alone))
        else:
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(gate, fcntl.LOCK_UN)
            os.close(lock)
            os.close(gate)


def _take_exclusively(report: pytest.TestReport) -> None:
    """An exclusive test's setup passed: wait for the other workers' tests to end (none
    starts: it holds the gate) and take the lock exclusively, before its call. Between
    two phases, so the wait is in neither's duration; the controller adds it up from the
    call's report (_EXCLUSIVE_WAIT)."""
    if report.when != "setup" or not report.passed or report.nodeid not in _pending:
        return
    item, lock = _pending.pop(report.nodeid)
    started = time.monotonic()
    fcntl.flock(lock, fcntl.LOCK_EX)   # from shared: no other test can take it meanwhile
    item.user_properties.append((_EXCLUSIVE_WAIT, time.monotonic() - started))


def _is_exclusive(item: pytest.Item | None) -> bool:
    return item is not None and item.get_closest_marker("exclusive") is not None


#: the gate, the lock and whether it is held exclusively already, from one exclusive test
#: to the next in a row
_kept: list[tuple[int, int, bool]] = []
#: the exclusive test in its setup, by node id: the item and its lock, held shared so far
_pending: dict[str, tuple[pytest.Item, int]] = {}
_LOCK_WAIT = "dbstand-lock-wait-s"
_EXCLUSIVE_WAIT = "dbstand-exclusive-wait-s"
#: seconds the workers waited for the lock: [exclusive tests, the others]
_lock_waits = [0.0, 0.0]


# --- the order the two workers take files in ------------------------------------------------
# `--dist loadfile` hands out whole files from one queue, in collection order (the Makefile
# turns off xdist's own reordering by test count). A long file taken last leaves the other
# worker idle for its whole length, so the files go longest first, by what each took in
# the last run (pytest's cache, written by the controller). A fresh clone (CI) has no cache
# yet: it takes the profile kept in the repository, tests/file-seconds.json (a copy of the
# cache's figures after a whole run: `make test-profile` refreshes it). A file neither
# knows goes first, in collection order: its cost is unknown.
_FILE_SECONDS_KEY = "dbstand/file-seconds"
#: `make test`'s run on the workers: every test but the exclusive ones, which run alone
#: after it (Makefile)
SHARED_PHASE = "not exclusive"
_KEPT_PROFILE = Path(__file__).parent / "file-seconds.json"
_file_seconds: dict[str, float] = {}


def _test_file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return   # one process: the order does not change its wall time
    cache = getattr(config, "cache", None)   # None with -p no:cacheprovider
    last: dict[str, float] = (cache.get(_FILE_SECONDS_KEY, {}) if cache is not None
                              else {}) or json.loads(_KEPT_PROFILE.read_text())
    # a stable sort: a file's tests stay together and in their order
    items.sort(key=lambda item: -last.get(_test_file(item.nodeid), float("inf")))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "PYTEST_XDIST_WORKER" in os.environ:
        _take_exclusively(report)
        return   # the controller (or a one-process run) adds them up
    file = _test_file(report.nodeid)
    _file_seconds[file] = _file_seconds.get(file, 0.0) + report.duration
    # each wait from the first report that holds it
    key = {"setup": _LOCK_WAIT, "call": _EXCLUSIVE_WAIT}.get(report.when)
    waited = sum(v for k, v in report.user_properties if k == key and isinstance(v, float))
    _lock_waits[0 if "exclusive" in report.keywords else 1] += waited


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Keep each file's seconds for the next run's order. A run that stopped early or
    picked tests inside files (-x, -k, -m, FILE::TEST) leaves the figures alone: they
    would be of part of a file; except `make test`'s workers' run, `-m "not exclusive"`,
    whose order they are (the exclusive tests run after it, in one process)."""
    config = session.config
    cache = getattr(config, "cache", None)
    if ("PYTEST_XDIST_WORKER" in os.environ or cache is None or not _file_seconds
            or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
            or session.shouldstop or session.shouldfail
            or config.getoption("keyword")
            or config.getoption("markexpr") not in ("", SHARED_PHASE)
            or any("::" in arg for arg in config.args)):
        return
    seconds = dict(cache.get(_FILE_SECONDS_KEY, {}))
    seconds.update({f: round(s, 2) for f, s in _file_seconds.items()})
    cache.set(_FILE_SECONDS_KEY, seconds)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The slowest files of a run under pytest-xdist: where the suite's time goes, run after
    run."""
    if "PYTEST_XDIST_WORKER" in os.environ or os.environ.get(SHARED_ENV) is None:
        return
    slowest = sorted(_file_seconds.items(), key=lambda item: -item[1])[:12]
    terminalreporter.write_sep("=", f"slowest {len(slowest)} files (s, waits for "
                                    "the lock left out)")
    for file, seconds in slowest:
        terminalreporter.write_line(f"{seconds:8.1f}  {file}")
    # an exclusive test waits for every other worker's test to end, and the others wait
    # for it: the cores those waits leave idle
    terminalreporter.write_line(f"waits for the lock (s): exclusive tests {_lock_waits[0]:.0f}, "
                                f"the others {_lock_waits[1]:.0f}")


@pytest.fixture(scope="session")
def pg() -> Iterator[ServerRecord]:
    """A throwaway PostgreSQL for the whole session, stopped at the end."""
    with ManagedPostgres() as record:
        yield record


@pytest.fixture(scope="session")
def pg_url(pg: ServerRecord) -> str:
    """The URL with its password, as a user would type it."""
    return pg.target().secret()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[ServerRecord]:
    """A throwaway MariaDB (Debian's mariadb-server) for the whole session."""
    from dbstand.targets.mysql.managed import ManagedMariaDB

    with ManagedMariaDB() as record:
        yield record


@pytest.fixture(scope="session")
def mariadb_url(mariadb: ServerRecord) -> str:
    return mariadb.target().secret()


@pytest.fixture(scope="session")
def tarantool_srv() -> Iterator[ServerRecord]:
    """A throwaway Tarantool (Debian's tarantool) with the kv study's settings."""
    from dbstand.targets.tarantool.managed import ManagedTarantool

    with ManagedTarantool() as record:
        yield record


@pytest.fixture(scope="session")
def tarantool_url(tarantool_srv: ServerRecord) -> str:
    return tarantool_srv.target().secret()


#: docquery's posts as its tests read them: 200 documents of seed 11, tables dbstand_*
DOCQUERY_SIZE, DOCQUERY_SEED = 200, 11


@pytest.fixture(scope="session")
def ferret() -> Iterator[TargetURL]:
    """A throwaway FerretDB holding docquery's posts (DOCQUERY_SIZE, DOCQUERY_SEED), for
    every test file of the worker that reads them (stacks, --db-rtt): none writes."""
    from dbstand.targets.mongodb.managed import ManagedFerretDB
    from dbstand.workloads.docquery import data

    with ManagedFerretDB() as record:
        url = record.target()
        data.load_url(url, DOCQUERY_SIZE, DOCQUERY_SEED, prefix="dbstand_")
        yield url


@pytest.fixture(autouse=True)
def dbstand_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
                 ) -> Path:
    """Keep dbstand's state (managed servers' records) out of the user's home."""
    home = tmp_path_factory.mktemp("dbstand-home")
    monkeypatch.setenv("DBSTAND_HOME", str(home))
    return home


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None, python_prelude: str = "") -> CliResult:
    """Run `dbstand ARGS` in a fresh interpreter, as a user would."""
    code = f"{python_prelude}\nfrom dbstand.cli.app import main\nmain()"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@contextlib.contextmanager
def _environ(changes: dict[str, str]) -> Iterator[None]:
    """Set variables for one call; put back exactly what was there, also what the call
    itself changed."""
    saved = dict(os.environ)
    os.environ.update(changes)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in saved]:
            del os.environ[key]
        for key, value in saved.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def _exit_status(exc: SystemExit, stderr: TextIO) -> int:
    """The status the interpreter would exit with for this SystemExit."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)
    return 1


def run_cli_in_process(*args: str, cwd: Path | None = None,
                       env: dict[str, str] | None = None) -> CliResult:
    """Run `dbstand ARGS` through `main()` in this interpreter: what a fresh process
    would print and return, without paying for one.

    Everything the call can change is put back afterwards: the signal handlers
    (main() installs one for SIGTERM), the environment, the working directory,
    sys.argv, the GC switch and the shared consoles. An exception that escapes main()
    ends up as the interpreter would report it: a traceback on stderr and status 1.
    Per-call hangs are bounded by pytest-timeout (pyproject.toml), as for any test.

    The objects the session already holds are frozen for the call (gc.freeze): the
    engine collects garbage before every iteration, and a collection that walks the
    whole test session's heap (every driver and ORM imported by earlier tests) costs
    several times what it costs in a fresh `dbstand` process.
    """
    from dbstand import console as common
    from dbstand.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    consoles = [dict(c.__dict__) for c in (common.console, common.err_console)]
    cwd_before, argv_before, gc_before = os.getcwd(), sys.argv, gc.isenabled()
    freeze = gc.get_freeze_count() == 0  # leave alone whatever someone else froze
    try:
        with _environ({"COLUMNS": "200", **(env or {})}), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = ["dbstand", *args]
            common.reset_consoles()  # they now see the buffers and COLUMNS, not pytest's
            if freeze:
                gc.freeze()
            try:
                main(list(args))
                code = 0  # main() always exits; returning is a bug the status shows
            except SystemExit as exc:
                code = _exit_status(exc, err)
            except Exception:
                traceback.print_exc(file=err)
                code = 1
    finally:
        if freeze:
            gc.unfreeze()
        os.chdir(cwd_before)
        sys.argv = argv_before
        for console, saved in zip((common.console, common.err_console), consoles,
                                  strict=True):
            console.__dict__.clear()
            console.__dict__.update(saved)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if gc_before and not gc.isenabled():
            gc.enable()
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    """`dbstand ARGS` called in-process (see run_cli_in_process); with
    DBSTAND_TEST_CLI=process, in a fresh interpreter each, to tell a failure of the
    in-process harness from one of dbstand."""
    if os.environ.get("DBSTAND_TEST_CLI") == "process":
        return run_cli
    return run_cli_in_process


@pytest.fixture
def cli_in_process() -> Callable[..., CliResult]:
    """Always in-process, whatever DBSTAND_TEST_CLI says: for the harness's own tests."""
    return run_cli_in_process


@pytest.fixture
def cli_process() -> Callable[..., CliResult]:
    """`dbstand ARGS` in a fresh interpreter, for what only a real process shows: its
    import cost, a blocked import, a server that must outlive the command, signals."""
    return run_cli
