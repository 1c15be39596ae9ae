"""Stacks honour the addresses dbstand gives them: they listen on DBSTAND_HOST (a
network namespace's address, or another loopback one) and reach their database at
DBSTAND_DB_HOST:DBSTAND_DB_PORT, so a --db-rtt path carries their traffic; a stack that
goes around the proxy fails its case rather than being measured on the wrong path."""

from __future__ import annotations

import json
import socket
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import STACKS_ROOT, all_manifests
from dbstand.targets.url import parse_target_url
from dbstand.workloads.webtech.rules import STATIC_DIR

#: a loopback address other than 127.0.0.1: a stack that names 127.0.0.1 itself in its
#: server's config does not answer there
OTHER = "127.0.0.2"


def cases(path: Path) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def answers(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, port)) == 0


@pytest.mark.parametrize("stack", ["static-nginx", "static-apache", "perl-starman"])
def test_a_stack_listens_on_the_host_it_is_given(stack: str) -> None:
    """Apache and nginx configs are written from DBSTAND_HOST (as Starman's option):
    healthy on 127.0.0.2, and nothing of the stack's on 127.0.0.1's same port."""
    with running_stack(all_manifests()[stack], bind=OTHER, workers=1,
                       static_dir=STATIC_DIR) as handle:
        assert handle.base_url.startswith(f"http://{OTHER}:")
        assert answers(OTHER, handle.port)
        assert not answers("127.0.0.1", handle.port)


def bypassing_stack(root: Path, direct_url: str) -> None:
    """python-raw's parking service, started with the database's own address in
    DBSTAND_DB_URL instead of the one dbstand gives: its traffic skips the proxy."""
    folder = root / "python" / "bypass-raw"
    folder.mkdir(parents=True)
    manifest = (STACKS_ROOT / "python" / "python-raw" / "stack.toml").read_text()
    manifest = manifest.replace('name = "python-raw"', 'name = "bypass-raw"')
    start = 'command = ["sh", "-c", """exec'
    assert start in manifest
    manifest = manifest.replace(
        start, f'command = ["sh", "-c", """DBSTAND_DB_URL={direct_url} exec')
    (folder / "stack.toml").write_text(textwrap.dedent(manifest))


def test_a_stack_that_goes_around_the_proxy_fails_its_case(cli, pg_url: str,
                                                           tmp_path: Path) -> None:
    root = tmp_path / "stacks"
    bypassing_stack(root, parse_target_url(pg_url).redacted().replace(":***@", "@"))
    out = tmp_path / "r.jsonl"
    res = cli("--stack-dir", str(root), "run", "parking", "--stack", "bypass-raw",
              "--target", pg_url, "--logging", "off", "--users", "1", "--passes", "1",
              "--batches", "2", "--load", "seed", "--db-rtt", "1ms", "-o",
              str(out))
    assert res.code == 1, res.stdout + res.stderr
    recs = cases(out)
    assert {r["params"]["db_rtt"] for r in recs} == {"0 ms", "1 ms"}
    for r in recs:
        assert r["status"] == "failed"
        assert "none of its database traffic went through the" in r["error"]
        assert "DBSTAND_DB_HOST:DBSTAND_DB_PORT" in r["error"]
