"""Server stacks from folders outside the package: `--stack-dir` and DBSTAND_STACKS,
the same manifest checks, launcher and webtech verification as the packaged ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbstand.errors import UserError
from dbstand.stacks.manifest import STACKS_ENV, all_manifests
from stack_folders import write_stack

SERVER = '''"""A webtech stack of the user's own: /file and /hello on the standard library."""
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FILE = (Path(os.environ["DBSTAND_STATIC_DIR"]) / "file.html").read_bytes()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body in separate writes

    def do_GET(self):
        body, kind = {"/file": (FILE, "text/html"),
                      "/hello": (b"Hello, World", "text/plain")}.get(self.path, (None, ""))
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer((os.environ["DBSTAND_HOST"], int(os.environ["DBSTAND_PORT"])),
                    Handler).serve_forever()
'''

MANIFEST = '''[stack]
name = "{name}"
description = "the user's own stack: Python's http.server"
language = "python"
framework = "none"
web_server = "http.server"
orm = "none"
concurrency = "threads"
workloads = ["webtech"]
tests = ["file", "hello"]
databases = []

[install]
python = "dbstand"

[start]
command = ["./start.sh"]
timeout = 30

[health]
path = "/hello"
'''


def make_stack(root: Path, name: str, manifest: str = MANIFEST) -> Path:
    return write_stack(root, name, manifest, SERVER)


def test_outside_stack_runs_webtech_end_to_end(cli, tmp_path: Path) -> None:
    root = tmp_path / "my-stacks"
    make_stack(root, "my-hello")
    out = tmp_path / "r.jsonl"
    res = cli("--stack-dir", str(root), "run", "webtech", "--stack", "my-hello",
              "--test", "file,hello", "--clients", "1", "--requests", "200",
              "--repeats", "2", "--load", "seed", "-o", str(out))
    assert res.code == 0, res.stderr + res.stdout
    recs = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "case"]
    assert {r["op"] for r in recs} == {"file", "hello"}
    assert all(r["status"] == "ok" and r["stack"] == "my-hello" for r in recs)
    # the same folder through the environment: listed beside the packaged stacks
    res = cli("stack", "list", env={STACKS_ENV: str(root)})
    assert res.code == 0 and "my-hello" in res.stdout and "static-nginx" in res.stdout


def test_outside_manifest_errors_name_file_and_key(cli, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "bad"
    folder = make_stack(root, "my-bad", MANIFEST.replace('orm = "none"', 'orm = "lots"'))
    monkeypatch.setenv(STACKS_ENV, str(root))
    with pytest.raises(UserError, match=f"{folder / 'stack.toml'}: stack.orm must be"):
        all_manifests()
    res = cli("--stack-dir", str(root), "stack", "list")
    assert res.code == 2 and "stack.orm must be one of" in res.stderr
    assert str(folder / "stack.toml") in res.stderr
    # a name the package already uses is refused, naming both files
    twin = tmp_path / "twin"
    make_stack(twin, "static-nginx")
    monkeypatch.setenv(STACKS_ENV, str(twin))
    with pytest.raises(UserError, match=r"stack\.name 'static-nginx' is used twice"):
        all_manifests()
    res = cli("--stack-dir", str(tmp_path / "missing"), "stack", "list")
    assert res.code == 2 and "not a folder" in res.stderr
