"""Hosts that are not loopback: a run whose traffic crosses network namespaces.

The test makes its own namespaces, joined by veth pairs, with addresses from the
benchmarking range 198.18.0.0/15 only (RFC 2544): `db` holds a managed PostgreSQL
bound to 198.18.0.1, `hub` routes between the others and runs the Dask scheduler and
`dbstand run kv --cluster`, `w1` and `w2` each hold one Dask worker. Every worker's
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

import pytest

from dbstand.errors import ServerError
from dbstand.targets.postgresql.managed import ManagedPostgres

SRC = str(Path(__file__).resolve().parents[2] / "src")
DB_ADDR = "198.18.0.1"
HUB_ADDR = "198.18.1.1"            # the scheduler's address (hub side of w1's link)
WORKER_ADDRS = {"w1": "198.18.1.2", "w2": "198.18.2.2"}
SCHEDULER_PORT = 8786              # inside the test's own namespace: no clash possible
#: (namespace a, address in a, namespace b, address in b), all /24
LINKS = [("db", DB_ADDR, "hub", "198.18.0.2"),
         ("w1", WORKER_ADDRS["w1"], "hub", HUB_ADDR),
         ("w2", WORKER_ADDRS["w2"], "hub", "198.18.2.1")]
GATEWAY = {"db": "198.18.0.2", "w1": HUB_ADDR, "w2": "198.18.2.1"}

#: run inside `db`: a managed PostgreSQL on the namespace's address; its URL and
#: password go to our pipe (never argv or environment), it stops when stdin closes
DB_SCRIPT = f"""
import json, sys
from dbstand.targets.postgresql.managed import ManagedPostgres
with ManagedPostgres(bind={DB_ADDR!r}) as record:
    print(json.dumps({{"url": record.url, "password": record.password}}), flush=True)
    sys.stdin.read()
"""


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class Namespaces:
    """The test's namespaces (names unique to this process) and what runs in them."""

    def __init__(self) -> None:
        self.prefix = f"dbst{os.getpid()}"
        self.made: list[str] = []
        self.procs: list[subprocess.Popen] = []

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
        env = {**os.environ, "PYTHONPATH": SRC}
        return subprocess.run(self.argv(short, argv), env=env, timeout=120,
                              **kwargs)  # type: ignore[call-overload]

    def start(self, short: str, argv: list[str], **kwargs: object) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": SRC}
        proc = subprocess.Popen(self.argv(short, argv), env=env, start_new_session=True,
                                **kwargs)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.stdin is not None:  # the database stops cleanly when stdin closes
                proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(30)
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, 9)
                    proc.wait(5)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        for ns in self.made:  # deleting a namespace deletes its veth ends
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


@pytest.fixture
def namespaces() -> Iterator[Namespaces]:
    spaces = Namespaces()
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
    db = namespaces.start("db", [sys.executable, "-c", DB_SCRIPT], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dask = str(Path(sys.executable).parent / "dask")
    namespaces.start("hub", [dask, "scheduler", "--host", HUB_ADDR, "--port",
                             str(SCHEDULER_PORT), "--no-dashboard"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for short, addr in WORKER_ADDRS.items():
        namespaces.start(short, [dask, "worker", f"tcp://{HUB_ADDR}:{SCHEDULER_PORT}",
                                 "--host", addr, "--name", short, "--nthreads", "1",
                                 "--no-nanny", "--no-dashboard"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    line = db.stdout.readline()  # type: ignore[union-attr]
    assert line, f"the database did not start in its namespace: {db.stderr.read()[-800:]}"  # type: ignore[union-attr]
    server = json.loads(line)
    assert server["url"].startswith(f"postgresql://postgres@{DB_ADDR}:")
    _wait_workers(namespaces, 40)

    out = tmp_path / "kv.jsonl"
    target = server["url"].replace("postgres@", f"postgres:{server['password']}@", 1)
    argv = ["run", "kv", "--target", target, "--stack", "psycopg2", "--op", "select",
            "--mode", "threads:2", "--rows", "200", "--revs", "400", "--min-iterations", "3",
            "--max-iterations", "3", "--cluster", f"tcp://{HUB_ADDR}:{SCHEDULER_PORT}",
            "-o", str(out)]
    # the URL (with its password) reaches the client through its stdin, not its argv
    script = ("import json, sys\nfrom dbstand.cli.app import main\n"
              "main(json.loads(sys.stdin.read()))\n")
    started = time.monotonic()
    run = namespaces.run_in("hub", [sys.executable, "-c", script], input=json.dumps(argv),
                            capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert server["password"] not in run.stdout + run.stderr + out.read_text()
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
    assert time.monotonic() - started < 60


def test_bind_address_outside_a_namespace_is_refused() -> None:
    """On the machine's own network only loopback is allowed, in one line."""
    for address in (DB_ADDR, "8.8.8.8"):
        with pytest.raises(ServerError, match="refused: only a loopback address"):
            ManagedPostgres(bind=address)
    with pytest.raises(ServerError, match="is not an IP address"):
        ManagedPostgres(bind="db.example")
    assert ManagedPostgres(bind="127.0.0.2").bind == "127.0.0.2"
