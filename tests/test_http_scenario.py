"""`dbstand run http --scenario FILE`: a user's TOML scenario on the native engine,
against a server stack of the user's own (started by dbstand's launcher) and a URL."""

from __future__ import annotations

import json
import time
from pathlib import Path

from dbstand.workloads.scenario.file import load_scenario
from stack_folders import write_stack

API = '''"""A tiny JSON API: POST /login gives a token; GET /item/N needs it."""
import json
import os
import secrets
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKENS = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body in separate writes

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        token = secrets.token_hex(8)
        TOKENS[token] = data["user"]
        self.answer(200, {"token": token})

    def do_GET(self):
        if self.path == "/health":
            return self.answer(200, {"ok": True})
        path, _, query = self.path.partition("?")
        token = query.partition("token=")[2]
        if token not in TOKENS:
            return self.answer(403, {"error": "no such token"})
        self.answer(200, {"owner": TOKENS[token], "item": int(path.rsplit("/", 1)[1]),
                          "price": 3})

    def log_message(self, *args):
        pass


ThreadingHTTPServer((os.environ["DBSTAND_HOST"], int(os.environ["DBSTAND_PORT"])),
                    Handler).serve_forever()
'''

MANIFEST = '''[stack]
name = "{name}"
description = "the user's own JSON API on http.server"
language = "python"
orm = "none"
workloads = ["http"]
databases = []

[install]
python = "dbstand"

[start]
command = ["./start.sh"]
timeout = 30

[health]
path = "/health"
'''

SCENARIO = '''name = "shop"

[vars]
user = "alice"

[[step]]
name = "login"
method = "POST"
path = "/login"
headers = { "Content-Type" = "application/json" }
body = '{"user": "{{user}}-{{vu}}"}'
capture = { token = "token" }
expect_status = 200

[[step]]
name = "item"
path = "/item/{{iter}}?token={{token|url}}"
expect_body = ["price"]
think_ms = THINK
'''


def _stack(root: Path) -> Path:
    write_stack(root, "my-api", MANIFEST, API)
    return root


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_scenario_on_an_outside_stack(cli, tmp_path: Path) -> None:
    root = _stack(tmp_path / "stacks")
    scenario = tmp_path / "shop.toml"
    scenario.write_text(SCENARIO.replace("THINK", "5"))
    out = tmp_path / "r.jsonl"
    started = time.monotonic()
    res = cli("--stack-dir", str(root), "run", "http", "--scenario", str(scenario),
              "--stack", "my-api", "--users", "1,2", "-n", "40", "-o", str(out),
              "--export", f"csv={tmp_path / 'r.csv'}")
    assert res.code == 0, res.stderr + res.stdout
    recs = cases(out)
    assert [(r["op"], r["mode"], r["stack"]) for r in recs] == [
        ("shop", "scenario:1", "my-api"), ("shop", "scenario:2", "my-api")]
    for r in recs:
        assert r["status"] == "ok" and r["workload"] == "http"
        assert r["iterations_ok"] == 40 and r["iterations_failed"] == 0
        assert r["http"]["successes"] == 80  # login + item, captured token accepted
        assert [s["name"] for s in r["http"]["steps"]] == ["login", "item"]
    # 40 iterations, one virtual user, 5 ms of think time each
    assert recs[0]["duration_s"] >= 40 * 0.005
    assert time.monotonic() - started < 120
    assert (tmp_path / "r.csv").read_text().count("shop") >= 2
    # compare reads the records like any others
    res = cli("compare", str(out), str(out))
    assert res.code == 0, res.stderr
    # open loop: 40 iterations/s started over 4 users for 1 s, whatever the server does
    out = tmp_path / "open.jsonl"
    res = cli("--stack-dir", str(root), "run", "http", "--scenario", str(scenario),
              "--stack", "my-api", "--users", "4", "--rate", "40", "-d", "1",
              "-o", str(out))
    assert res.code == 0, res.stderr + res.stdout
    (rec,) = cases(out)
    assert rec["mode"] == "scenario:4@40/s" and rec["params"]["loop"] == "open"
    assert 36 <= rec["iterations_ok"] <= 41 and rec["iterations_failed"] == 0


def test_failed_checks_and_bad_files(cli, tmp_path: Path) -> None:
    root = _stack(tmp_path / "stacks")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(SCENARIO.replace("THINK", "0").replace('expect_body = ["price"]',
                                                           'expect_body = ["cheese"]'))
    out = tmp_path / "r.jsonl"
    res = cli("--stack-dir", str(root), "run", "http", "--scenario", str(wrong),
              "--stack", "my-api", "-n", "10", "-o", str(out))
    assert res.code == 1
    (rec,) = cases(out)
    assert rec["status"] == "failed" and rec["iterations_failed"] == 10
    assert "step 'item': body does not contain 'cheese'" in json.dumps(rec)
    for text, message in [
            ('[[step]]\npath = "/x"\nexpect_status = 700\n',
             "step[1].expect_status must be an HTTP status"),
            ('[[step]]\npath = "/x"\ncaptur = { a = "b" }\n', "step[1].captur: unknown key"),
            ('[[step]]\npath = "x"\n', "step[1].path must be a path starting with /"),
            ('name = "x"\n', "needs at least one [[step]]"),
            ('[[step]\n', "bad.toml: ")]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        res = cli("run", "http", "--scenario", str(bad), "--url", "http://127.0.0.1:9",
                  "-o", str(tmp_path / "never.jsonl"))
        assert res.code == 2 and message in res.stderr, (text, res.stderr)
        assert f"{bad}" in res.stderr and not (tmp_path / "never.jsonl").exists()
    name, scenario = load_scenario(str(wrong))
    assert name == "shop" and scenario.steps[0].status == 200
