"""Manifests and the launcher, with small stacks written in the test: real processes,
real sockets, no fakes."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import textwrap
from pathlib import Path

import psutil
import pytest

from dbstand.errors import ServerError, UserError
from dbstand.stacks.build import ensure_built, missing_debian
from dbstand.stacks.launcher import running_stack
from dbstand.stacks.manifest import STACKS_ROOT, ManifestError, all_manifests, parse_manifest

#: a server in Python's standard library that forks a child, as prefork servers do
SERVER = textwrap.dedent("""
    import http.server, os, sys, time
    if os.environ.get("FAIL"):
        print("cannot start: FAIL is set", flush=True)
        sys.exit(3)
    if os.fork() == 0:
        time.sleep(3600)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = open(os.environ["DBSTAND_BUILD_DIR"] + "/built.txt", "rb").read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    http.server.HTTPServer((os.environ["DBSTAND_HOST"], int(os.environ["DBSTAND_PORT"])),
                           H).serve_forever()
""")


def make_stack(root: Path, name: str = "py-tiny", env: str = "", shared: str = "") -> Path:
    """A stack folder; `shared` is a line of its [stack] table."""
    folder = root / "python" / name
    folder.mkdir(parents=True)
    (folder / "server.py").write_text(SERVER)
    (folder / "stack.toml").write_text(textwrap.dedent(f"""
        [stack]
        name = "{name}"
        language = "python"
        orm = "none"
        workloads = ["webtech"]
        tests = ["hello"]
        {shared}
        [install]
        python = "dbstand"
        [build]
        command = ["sh", "-c", "echo built > $DBSTAND_BUILD_DIR/built.txt"]
        [start]
        command = ["sh", "-c", "exec $DBSTAND_PYTHON $DBSTAND_STACK_DIR/server.py"]
        timeout = 10
        env = {{ {env} }}
        [health]
        path = "/hello"
    """))
    return folder


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DBSTAND_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_every_shipped_manifest_parses_and_names_its_folder() -> None:
    manifests = all_manifests()
    assert len(manifests) >= 20
    for name, m in manifests.items():
        assert m.folder.name == name and m.workloads and m.start.argv


def test_a_bad_manifest_is_one_clear_error(tmp_path: Path) -> None:
    folder = make_stack(tmp_path)
    (folder / "stack.toml").write_text("[stack]\nname = 'other'\n")
    with pytest.raises(ManifestError, match=r"stack\.name must be the folder's name"):
        parse_manifest(folder / "stack.toml")
    (folder / "stack.toml").write_text("[stack\n")
    with pytest.raises(ManifestError, match=r"stack\.toml"):
        parse_manifest(folder / "stack.toml")


def test_start_health_and_stop_leave_no_process(tmp_path: Path) -> None:
    manifest = parse_manifest(make_stack(tmp_path) / "stack.toml")
    with running_stack(manifest) as handle:
        with socket.create_connection(("127.0.0.1", handle.port)) as sock:
            sock.sendall(b"GET /hello HTTP/1.0\r\n\r\n")
            answer = b""  # HTTP/1.0: the server closes after the answer, which may
            while chunk := sock.recv(4096):  # come in more than one segment
                answer += chunk
            assert b"built" in answer, answer
        tree = [handle.pid, *psutil.Process(handle.pid).children(recursive=True)]
        assert len(tree) == 2  # the server and the child it forked
        work_dir = handle.work_dir
    assert not any(psutil.pid_exists(p if isinstance(p, int) else p.pid) and
                   psutil.Process(p if isinstance(p, int) else p.pid).status() !=
                   psutil.STATUS_ZOMBIE for p in tree)
    assert not work_dir.exists()


def test_a_stack_that_dies_names_itself_and_its_log(tmp_path: Path) -> None:
    manifest = parse_manifest(make_stack(tmp_path, env='FAIL = "1"') / "stack.toml")
    with pytest.raises(ServerError, match=r"exited with code 3.*FAIL is set"), \
            running_stack(manifest):
        pass


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    manifest = parse_manifest(make_stack(tmp_path) / "stack.toml")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(UserError, match="in use"), \
                running_stack(manifest, port=busy.getsockname()[1]):
            pass


def test_builds_are_cached_by_the_sources_shared_folders_included(tmp_path: Path) -> None:
    common = tmp_path / "python" / "_shared" / "lib"
    common.mkdir(parents=True)
    (common / "lib.txt").write_text("v1")
    manifest = parse_manifest(make_stack(tmp_path, shared='shared = ["../_shared/lib"]')
                              / "stack.toml")
    first = ensure_built(manifest)
    assert ensure_built(manifest) == first  # cached
    (common / "lib.txt").write_text("v2")
    second = ensure_built(parse_manifest(manifest.folder / "stack.toml"))
    assert second != first and (second / "built.txt").exists()
    assert not [p for p in os.listdir(first.parent) if p.startswith(".")]  # no staging left


def _own_venv_stack(root: Path, name: str, pin: str) -> Path:
    folder = make_stack(root, name)
    toml = folder / "stack.toml"
    toml.write_text(toml.read_text().replace(
        'python = "dbstand"', f'python = "own"\npip = ["{pin}"]'))
    return toml


def test_an_own_venv_gets_its_pins_with_bytecode_and_a_bad_pin_is_one_line(
        tmp_path: Path) -> None:
    """uv builds the venv: the pinned package importable by the stack's interpreter, its
    bytecode written at install (a start with PYTHONDONTWRITEBYTECODE must not compile
    it again); a pin no index has fails the build in one line, nothing left behind."""
    built = ensure_built(parse_manifest(_own_venv_stack(tmp_path, "py-own", "six==1.17.0")))
    python = built / "venv" / "bin" / "python"
    out = subprocess.run([python, "-c", "import six, sys; print(six.__version__, sys.prefix)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1.17.0", str(built / "venv")]
    assert list((built / "venv").rglob("six*.pyc"))
    bad = parse_manifest(_own_venv_stack(tmp_path, "py-bad", "dbstand-no-such-package==1.0"))
    with pytest.raises(ServerError) as failed:
        ensure_built(bad)
    assert "'py-bad': uv pip install failed" in str(failed.value)
    assert "\n" not in str(failed.value)
    assert not [p for p in os.listdir(built.parent) if p.startswith(".")]


def test_missing_debian_packages_are_told_apart_in_one_query() -> None:
    """dpkg's own answer: installed packages (python3 runs this test) are not missing,
    an unknown one is, in the order asked."""
    assert missing_debian(("dbstand-no-such-package-b", "python3",
                           "dbstand-no-such-package-a")) == [
        "dbstand-no-such-package-b", "dbstand-no-such-package-a"]
    assert missing_debian(("python3",)) == [] and missing_debian(()) == []

#: a stack that runs another stack's application under another runtime, backend or
#: front server (docs/stack-manifest.md, "Sharing code between stacks"): the only
#: stack folders a stack may list in `shared`
SAME_APPLICATION = {"pypy-raw": "python-raw", "pypy-sqlalchemy": "python-sqlalchemy",
                    "cpp-parking-soci-orm-odbc": "cpp-parking-soci-orm",
                    "java-apache-tomcat-ajp": "java-tomcat-servlet"}


#: a path from a stack's folder into a shared folder, as its files write it
SHARED_REF = re.compile(r"(?<![\w.])((?:\.\./)+_shared/[\w-]+)")


def test_stacks_share_code_one_way() -> None:
    """Shared code lives in `<language>/_shared/<name>/` (or `_shared/<name>/` across
    languages), is listed in `shared` by every stack that reads it (its cache key), and
    no folder beside the stacks is anything else."""
    manifests = all_manifests()
    stacks = {m.folder.resolve(): m.name for m in manifests.values()}
    used: set[Path] = set()
    for m in manifests.values():
        shared = [(m.folder / s).resolve() for s in m.shared]
        for folder in shared:
            assert folder.is_dir(), (m.name, folder)
            if folder in stacks:
                assert SAME_APPLICATION.get(m.name) == stacks[folder], (m.name, folder)
            else:
                assert folder.parent.name == "_shared", (m.name, folder)
                used.add(folder)
        for command in (m.build, m.start):
            program = command.resolved(m.folder)[0] if command else ""
            if program.startswith(str(STACKS_ROOT)) and "/_shared/" in program:
                assert any(Path(program).resolve().is_relative_to(f) for f in shared), \
                    (m.name, program)
        # a shared folder a stack's own files name (sourced, on PYTHONPATH, included)
        # is in its `shared` too: else a change there would not rebuild it
        for path in m.folder.rglob("*"):
            if path.is_file() and path.suffix not in (".pyc", ".jar", ".class"):
                for ref in SHARED_REF.findall(path.read_text(errors="replace")):
                    assert (m.folder / ref).resolve() in shared, (m.name, path.name, ref)
    shared_folders = {p.resolve() for p in STACKS_ROOT.glob("*/_shared/*")} | \
        {p.resolve() for p in STACKS_ROOT.glob("_shared/*")}
    assert shared_folders == used  # every shared folder is used, by declaration
    for language in STACKS_ROOT.iterdir():
        if not language.is_dir() or language.name.startswith(("_", ".")):
            continue
        for folder in language.iterdir():
            if folder.is_dir() and folder.name != "_shared" and \
                    folder.name != "__pycache__" and not folder.name.startswith("."):
                assert (folder / "stack.toml").exists(), folder
