"""The README's quick start, command by command, as a new user types it (issue 29).

`make demo` itself runs in tests/test_demo_check.py (a fresh clone); here it is held to
what the later commands need: the `demo` extra it installs brings every stack they
name. The dbstand commands then run in order: the default suite, a throwaway
PostgreSQL (`server up`, a real process: the server outlives it), the kv command on
it with the port it printed, and `server down`; the runs' measurements are shortened by
appended options (figures are bench/'s business, not this test's).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from dbstand.workloads.catalog import get_stack

ROOT = Path(__file__).resolve().parent.parent
#: appended to the runs to keep each command a few seconds (the figures are not judged)
SHORT = {("run",): ["--revs", "2000", "--min-iterations", "2", "--max-iterations", "3"],
         ("run", "kv"): ["--revs", "300", "--rows", "500", "--min-iterations", "2",
                         "--max-iterations", "3"]}


def quick_start() -> list[list[str]]:
    """The commands of the README's quick start block, continuation lines joined and
    comments dropped."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```", 2)[1]
    joined = re.sub(r"\\\n\s*", " ", block)
    return [shlex.split(line, comments=True) for line in joined.splitlines()
            if line.strip() and shlex.split(line, comments=True)]


def extras_of(name: str, table: dict[str, list[str]]) -> set[str]:
    """`name` and every extra it pulls in through `dbstand[...]`."""
    out = {name}
    for requirement in table[name]:
        match = re.fullmatch(r"dbstand\[(.+)\]", requirement)
        if match:
            for inner in match.group(1).split(","):
                out |= extras_of(inner.strip(), table)
    return out


def test_the_readme_quick_start_runs_as_written(cli, cli_process, tmp_path: Path) -> None:
    commands = quick_start()
    assert commands[0] == ["make", "demo"]
    assert all(c[0] == ".venv/bin/dbstand" for c in commands[1:]), commands
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    demo = extras_of("demo", extras)
    port = None
    try:
        for argv in (c[1:] for c in commands[1:]):
            if argv[0] == "server":
                res = cli_process(*argv, cwd=tmp_path)
                assert res.code == 0, (argv, res.stderr)
                found = re.search(r"postgresql://\S+@127\.0\.0\.1:(\d+)/", res.stdout)
                port = found.group(1) if found else port
                continue
            if "PORT" in " ".join(argv):
                assert port, "the quick start uses PORT before a server printed one"
                argv = [a.replace("PORT", port) for a in argv]
            if "--stack" in argv:
                for name in argv[argv.index("--stack") + 1].split(","):
                    spec = get_stack(name)
                    assert spec.extra in demo, f"{name} needs dbstand[{spec.extra}]"
            short = SHORT.get(tuple(argv[:2]), SHORT.get(tuple(argv), []))
            res = cli(*argv, *short, cwd=tmp_path)
            assert res.code == 0, (argv, res.stderr)
        assert port is not None
        assert len(list((tmp_path / "results").glob("*.jsonl"))) == 2
    finally:
        cli_process("server", "down", "postgresql", cwd=tmp_path)
