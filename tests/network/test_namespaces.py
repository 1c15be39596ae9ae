"""Hosts that are not loopback: a run whose traffic crosses network namespaces.

The test makes its own namespaces, joined by veth pairs, with addresses from the
benchmarking range 198.18.0.0/15 only (RFC 2544): `db` holds a managed PostgreSQL
bound to 198.18.0.1 (`dbstand server up postgresql --bind`), `hub` routes between the
others and runs the Dask scheduler and `dbstand run kv --cluster` (which finds the
password in the server's record), `w1` and `w2` each hold one Dask worker. Every worker's
connections to the database leave from its own namespace's address, and the case
records them (cluster.per_worker[].source_addresses), read from the kernel's socket
table. Namespaces and processes are removed whatever happens (finally).

Needs root (`ip netns add`): where namespaces cannot be made, the test FAILS saying
why, as `make test` runs as root.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbstand.errors import ServerError
from dbstand.stacks.build import ensure_built
from dbstand.stacks.manifest import all_manifests
from dbstand.targets.postgresql.managed import ManagedPostgres

SRC = str(Path(__file__).resolve().parents[2] / "src")
DBSTAND = str(Path(sys.executable).parent / "dbstand")
DASK = str(Path(sys.executable).parent / "dask")
DB_ADDR = "198.18.0.1"
HUB_ADDR = "198.18.1.1"            # the scheduler's address (hub side of w1's link)
WORKER_ADDRS = {"w1": "198.18.1.2", "w2": "198.18.2.2"}
SCHEDULER_PORT = 8786              # inside the test's own namespace: no clash possible
#: (namespace a, address in a, namespace b, address in b), all /24
LINKS = [("db", DB_ADDR, "hub", "198.18.0.2"),
         ("w1", WORKER_ADDRS["w1"], "hub", HUB_ADDR),
         ("w2", WORKER_ADDRS["w2"], "hub", "198.18.2.1")]
GATEWAY = {"db": "198.18.0.2", "w1": HUB_ADDR, "w2": "198.18.2.1"}
STACK = "javascript-node-http"     # a shipped stack that needs no database for /hello
#: run inside `db`: the stack on the namespace's address until our pipe closes
STACK_SCRIPT = f"""
import sys
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import all_manifests
with running_stack(all_manifests()[{STACK!r}], bind={DB_ADDR!r}, workers=1) as handle:
    print(handle.base_url, flush=True)
    sys.stdin.read()
"""

def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class Namespaces:
    """The test's namespaces (names unique to this process) and what runs in them."""

    def __init__(self, state: Path) -> None:
        self.prefix = f"dbst{os.getpid()}"
        self.made: list[str] = []
        self.procs: list[subprocess.Popen] = []
        #: DBSTAND_HOME of every dbstand command here: the server's record (and password)
        #: is found by the client through it, never passed on a command line
        self.env = {**os.environ, "PYTHONPATH": SRC, "DBSTAND_HOME": str(state)}
        self.server_up = False

    def name(self, short: str) -> str:
        return f"{self.prefix}{short}"

    def make(self) -> None:
        if os.geteuid() != 0:
            pytest.fail("network namespaces need root (`ip netns add`); make test runs as "
                        "root: run this test as root")
        if shutil.which("ip") is None:
            pytest.fail("`ip` (iproute2) is not installed: scripts/install-debian-deps.sh")
        for short in ("db", "hub", "w1", "w2"):
            try:
                _ip("netns", "add", self.name(short))
            except RuntimeError as exc:
                pytest.fail(f"network namespaces are not allowed here: {exc}")
            self.made.append(self.name(short))
            _ip("-n", self.name(short), "link", "set", "lo", "up")
        for i, (a, addr_a, b, addr_b) in enumerate(LINKS):
            ea, eb = f"v{i}{a}", f"v{i}{b}"
            _ip("-n", self.name(a), "link", "add", ea, "type", "veth", "peer", "name", eb,
                "netns", self.name(b))
            for ns, dev, addr in ((a, ea, addr_a), (b, eb, addr_b)):
                _ip("-n", self.name(ns), "addr", "add", f"{addr}/24", "dev", dev)
                _ip("-n", self.name(ns), "link", "set", dev, "up")
        for ns, gateway in GATEWAY.items():  # everything else goes through the hub
            _ip("-n", self.name(ns), "route", "add", "198.18.0.0/15", "via", gateway)
        self.run_in("hub", ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], check=True)

    def argv(self, short: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name(short), *argv]

    def run_in(self, short: str, argv: list[str], **kwargs: object
               ) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(short, argv), env=self.env, timeout=120,
                              **kwargs)  # type: ignore[call-overload]

    def start(self, short: str, argv: list[str], *, pipes: bool = False) -> subprocess.Popen:
        """Start `argv` in a namespace; `pipes`: its stdin and stdout are ours (closing
        its stdin tells it to stop)."""
        piped = subprocess.PIPE if pipes else subprocess.DEVNULL
        proc = subprocess.Popen(self.argv(short, argv), env=self.env, start_new_session=True,
                                stdin=piped, stdout=piped, stderr=subprocess.DEVNULL,
                                text=True)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        if self.server_up:  # `server down` stops it by its record (pid, data folder)
            self.run_in("db", [DBSTAND, "server", "down", "postgresql"], capture_output=True)
        for proc in reversed(self.procs):
            if proc.stdin is not None:  # the stack stops its tree when its stdin closes
                proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(30)
            if proc.stdout is not None:
                proc.stdout.close()
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, 9)
                    proc.wait(5)
        for ns in self.made:  # deleting a namespace deletes its veth ends
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


@pytest.fixture
def namespaces(tmp_path: Path) -> Iterator[Namespaces]:
    spaces = Namespaces(tmp_path / "state")
    try:
        spaces.make()
        yield spaces
    finally:
        spaces.close()
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
        assert spaces.prefix not in left.stdout, "a namespace of the test was left behind"


def _wait_workers(spaces: Namespaces, deadline_s: float) -> None:
    """Until the scheduler in `hub` knows both workers."""
    check = ("from distributed import Client\n"
             f"c = Client('tcp://{HUB_ADDR}:{SCHEDULER_PORT}', timeout=20)\n"
             f"c.wait_for_workers(2, timeout={deadline_s})\n")
    proc = spaces.run_in("hub", [sys.executable, "-c", check], capture_output=True,
                         text=True)
    assert proc.returncode == 0, f"the Dask workers did not join: {proc.stderr[-800:]}"


def test_run_crosses_namespaces(namespaces: Namespaces, tmp_path: Path) -> None:
    namespaces.start("hub", [DASK, "scheduler", "--host", HUB_ADDR, "--port",
                             str(SCHEDULER_PORT), "--no-dashboard"])
    for short, addr in WORKER_ADDRS.items():
        namespaces.start(short, [DASK, "worker", f"tcp://{HUB_ADDR}:{SCHEDULER_PORT}",
                                 "--host", addr, "--name", short, "--nthreads", "1",
                                 "--no-nanny", "--no-dashboard"])
    namespaces.server_up = True
    up = namespaces.run_in("db", [DBSTAND, "server", "up", "postgresql", "--bind", DB_ADDR],
                           capture_output=True, text=True)
    assert up.returncode == 0, f"no database in its namespace: {up.stdout}{up.stderr}"
    url = next(w for w in up.stdout.split() if w.startswith("postgresql://"))
    assert url.startswith(f"postgresql://postgres@{DB_ADDR}:"), url
    _wait_workers(namespaces, 40)

    out = tmp_path / "kv.jsonl"
    argv = [DBSTAND, "run", "kv", "--target", url, "--stack", "psycopg2", "--op", "select",
            "--mode", "threads:2", "--rows", "200", "--revs", "400", "--min-iterations", "3",
            "--max-iterations", "3", "--cluster", f"tcp://{HUB_ADDR}:{SCHEDULER_PORT}",
            "-o", str(out)]
    started = time.monotonic()
    run = namespaces.run_in("hub", argv, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    record = json.loads((tmp_path / "state" / "servers" / "postgresql.json").read_text())
    assert record["password"] not in run.stdout + run.stderr + out.read_text()
    case = next(r for r in map(json.loads, out.read_text().splitlines())
                if r["type"] == "case")
    assert case["status"] == "ok", case.get("error")
    workers = {w["name"]: w for w in case["cluster"]["per_worker"]}
    assert set(workers) == set(WORKER_ADDRS)
    for name, addr in WORKER_ADDRS.items():
        # each worker sits in its own namespace and its database traffic leaves from there
        assert workers[name]["address"].startswith(f"tcp://{addr}:")
        assert workers[name]["source_addresses"] == [addr]
        assert workers[name]["ops"] > 0
    assert sum(w["ops"] for w in workers.values()) == case["cluster"]["total"]["ops"]

    # a server stack beside the database, loaded by the same workers from their namespaces
    ensure_built(all_manifests()[STACK])  # here, where its package registry is reachable
    stack = namespaces.start("db", [sys.executable, "-c", STACK_SCRIPT], pipes=True)
    base_url = stack.stdout.readline().strip()  # type: ignore[union-attr]
    assert base_url.startswith(f"http://{DB_ADDR}:"), f"the stack did not start: {base_url!r}"
    load = namespaces.run_in("hub", [DBSTAND, "http", f"{base_url}/hello", "-c", "2", "-n",
                                     "400", "--cluster", f"tcp://{HUB_ADDR}:{SCHEDULER_PORT}",
                                     "-o", str(tmp_path / "http.jsonl")],
                             capture_output=True, text=True)
    assert load.returncode == 0, load.stdout[-1500:] + load.stderr[-1500:]
    http = next(r for r in map(json.loads, (tmp_path / "http.jsonl").read_text().splitlines())
                if r["type"] == "case")
    per_worker = {w["name"]: w for w in http["cluster"]["per_worker"]}
    assert set(per_worker) == set(WORKER_ADDRS)
    assert all(0 < w["successes"] == w["requests"] for w in per_worker.values())
    assert http["cluster"]["total"]["successes"] == 400
    assert time.monotonic() - started < 60



def test_bind_address_outside_a_namespace_is_refused(cli: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """On the machine's own network only loopback is allowed, in one line."""
    monkeypatch.setenv("DBSTAND_HOME", str(tmp_path))
    res = cli("server", "up", "postgresql", "--bind", DB_ADDR)
    assert res.code != 0
    assert res.stderr.strip().splitlines() == [
        f"dbstand: error: bind address {DB_ADDR} refused: only a loopback address, or an "
        "address owned inside a network namespace (ip netns exec)"]
    for address in (DB_ADDR, "8.8.8.8"):
        with pytest.raises(ServerError, match="refused: only a loopback address"):
            ManagedPostgres(bind=address)
    with pytest.raises(ServerError, match="is not an IP address"):
        ManagedPostgres(bind="db.example")
    assert ManagedPostgres(bind="127.0.0.2").bind == "127.0.0.2"
