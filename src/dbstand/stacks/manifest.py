"""Server-stack manifests: `stacks/<language>/<name>/stack.toml` (docs/stack-manifest.md).

A manifest is read and checked here, never executed: every field has a type and a
default, and a bad manifest is one clear error naming its file and key. Discovery
walks the folders that ship with the package (so a wheel install has every stack),
then the user's own stack folders: `DBSTAND_STACKS` (paths separated by `:`), to
which `dbstand --stack-dir PATH` adds. Each such path is a stack folder itself (it
holds stack.toml), a folder of stack folders, or one of `<language>/<name>/` folders.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbstand.errors import UserError

STACKS_ROOT = Path(__file__).resolve().parent
MANIFEST = "stack.toml"
#: the environment variable naming the user's stack folders (os.pathsep-separated)
STACKS_ENV = "DBSTAND_STACKS"
ORM_KINDS = ("raw", "micro", "full", "none")
PYTHON_MODES = ("own", "dbstand")
#: files a build never depends on (editor and build droppings)
_IGNORED = ("__pycache__", "node_modules", "target", ".pyc")


@dataclass(frozen=True)
class Command:
    """An argv with its time limit; relative programs resolve against the stack folder."""

    argv: tuple[str, ...]
    timeout_s: float
    env: dict[str, str] = field(default_factory=dict)

    def resolved(self, folder: Path) -> list[str]:
        first = self.argv[0]
        if first.startswith("./") or (("/" in first) and not first.startswith("/")):
            first = str(folder / first)
        return [first, *self.argv[1:]]


@dataclass(frozen=True)
class Manifest:
    """One server stack as its manifest declares it."""

    name: str
    folder: Path
    description: str
    language: str
    framework: str
    web_server: str
    orm: str
    concurrency: str
    workloads: tuple[str, ...]
    tests: tuple[str, ...]
    databases: tuple[str, ...]
    start: Command
    health_path: str
    build: Command | None = None
    stands_in_for: str = ""
    limit: bool = False
    debian: tuple[str, ...] = ()
    pip: tuple[str, ...] = ()
    python: str = "own"
    commands: tuple[str, ...] = ()
    #: other folders (relative to this one) the build reads: part of the cache key
    shared: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()      # with python = "dbstand": modules that must import
    extra: str = ""                    # ... and the dbstand extra that installs them

    @property
    def labels(self) -> dict[str, Any]:
        """What a results record says of the stack."""
        return {"language": self.language, "framework": self.framework,
                "web_server": self.web_server, "orm": self.orm,
                "concurrency": self.concurrency, "stands_in_for": self.stands_in_for,
                "limit": self.limit}

    def source_hash(self) -> str:
        """A hash of every file in the folder: a build is reused while it matches."""
        digest = hashlib.sha256()
        for root in (self.folder, *((self.folder / s).resolve() for s in self.shared)):
            for path in sorted(root.rglob("*")):
                if not path.is_file() or any(part in _IGNORED or part.endswith(".pyc")
                                             for part in path.relative_to(root).parts):
                    continue
                digest.update(f"{root.name}/{path.relative_to(root)}".encode() + b"\0")
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    def implements(self, workload: str) -> bool:
        return workload in self.workloads


class ManifestError(UserError):
    """A manifest that cannot be used, named by its file."""


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{where} must be a list of strings")
    return tuple(value)


def _command(table: Any, where: str, default_timeout: float) -> Command:
    if not isinstance(table, dict):
        raise ManifestError(f"[{where}] must be a table")
    argv = _strs(table.get("command"), f"{where}.command")
    if not argv:
        raise ManifestError(f"{where}.command must name a program")
    timeout = table.get("timeout", default_timeout)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise ManifestError(f"{where}.timeout must be a positive number of seconds")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ManifestError(f"{where}.env must map names to strings")
    return Command(argv, float(timeout), dict(env))


def parse_manifest(path: Path) -> Manifest:
    """Read and check one stack.toml."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from None
    try:
        return _manifest(data, path.parent)
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from None


def _manifest(data: dict[str, Any], folder: Path) -> Manifest:
    stack = data.get("stack")
    if not isinstance(stack, dict):
        raise ManifestError("missing [stack] table")
    text = {key: stack.get(key, "") for key in ("name", "description", "language",
                                                   "framework", "web_server", "orm",
                                                   "concurrency", "stands_in_for")}
    for key, value in text.items():
        if not isinstance(value, str):
            raise ManifestError(f"stack.{key} must be a string")
    if not text["name"] or text["name"] != folder.name:
        raise ManifestError(f"stack.name must be the folder's name ({folder.name!r})")
    if text["orm"] not in ORM_KINDS:
        raise ManifestError(f"stack.orm must be one of {', '.join(ORM_KINDS)}")
    install = data.get("install", {})
    python = install.get("python", "own")
    if python not in PYTHON_MODES:
        raise ManifestError(f"install.python must be one of {', '.join(PYTHON_MODES)}")
    health = data.get("health", {})
    path = health.get("path", "/")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ManifestError("health.path must be a path starting with /")
    workloads = _strs(stack.get("workloads"), "stack.workloads")
    if not workloads:
        raise ManifestError("stack.workloads must name at least one workload")
    return Manifest(
        name=text["name"], folder=folder, description=text["description"],
        language=text["language"] or folder.parent.name, framework=text["framework"],
        web_server=text["web_server"], orm=text["orm"], concurrency=text["concurrency"],
        stands_in_for=text["stands_in_for"], workloads=workloads,
        tests=_strs(stack.get("tests"), "stack.tests"),
        databases=_strs(stack.get("databases"), "stack.databases"),
        limit=bool(stack.get("limit", False)),
        start=_command(data.get("start"), "start", 60.0),
        build=_command(data["build"], "build", 600.0) if "build" in data else None,
        health_path=path, debian=_strs(install.get("debian"), "install.debian"),
        pip=_strs(install.get("pip"), "install.pip"), python=python,
        commands=_strs(install.get("commands"), "install.commands"),
        modules=_strs(install.get("modules"), "install.modules"),
        shared=_strs(stack.get("shared"), "stack.shared"),
        extra=str(install.get("extra", "")),
    )


def stack_dirs() -> tuple[Path, ...]:
    """The user's stack folders from DBSTAND_STACKS; one that is not a folder is one
    error line."""
    out: list[Path] = []
    for entry in os.environ.get(STACKS_ENV, "").split(os.pathsep):
        if not entry.strip():
            continue
        path = Path(entry).expanduser()
        if not path.is_dir():
            raise UserError(f"{STACKS_ENV}: {entry} is not a folder")
        out.append(path.resolve())
    return tuple(dict.fromkeys(out))


def add_stack_dirs(paths: list[Path]) -> None:
    """`--stack-dir PATH` (repeatable): checked, then added to DBSTAND_STACKS so that
    every process this one starts finds the same stacks."""
    for path in paths:
        if not path.is_dir():
            raise UserError(f"--stack-dir {path}: not a folder")
    current = [e for e in os.environ.get(STACKS_ENV, "").split(os.pathsep) if e.strip()]
    os.environ[STACKS_ENV] = os.pathsep.join(
        [*current, *(str(p.expanduser().resolve()) for p in paths)])


def _manifest_paths(root: Path, packaged: bool) -> list[Path]:
    if packaged:
        return sorted(root.glob(f"*/*/{MANIFEST}"))
    if (root / MANIFEST).is_file():
        return [root / MANIFEST]
    return sorted(root.glob(f"*/{MANIFEST}")) + sorted(root.glob(f"*/*/{MANIFEST}"))


@functools.cache
def _manifests(roots: tuple[Path, ...]) -> dict[str, Manifest]:
    found: dict[str, Manifest] = {}
    for i, root in enumerate(roots):
        for path in _manifest_paths(root, packaged=i == 0):
            manifest = parse_manifest(path)
            if manifest.name in found:
                other = found[manifest.name].folder / MANIFEST
                raise ManifestError(f"{path}: stack.name {manifest.name!r} is used twice "
                                    f"(also by {other})")
            found[manifest.name] = manifest
    return found


def all_manifests(root: Path = STACKS_ROOT) -> dict[str, Manifest]:
    """Every server stack, by name: those that ship with dbstand (under `root`), then
    the user's stack folders."""
    return _manifests((root, *stack_dirs()))


def get_manifest(name: str, workload: str | None = None) -> Manifest:
    """A server stack by name (one clear error naming the known ones)."""
    manifests = all_manifests()
    manifest = manifests.get(name)
    known = [m.name for m in manifests.values() if workload is None or m.implements(workload)]
    if manifest is None:
        what = f"{workload} stack" if workload else "server stack"
        raise UserError(f"unknown {what} {name!r} (known: {', '.join(known) or 'none'})")
    if workload is not None and not manifest.implements(workload):
        raise UserError(f"stack {name!r} does not implement the {workload} workload "
                        f"(those that do: {', '.join(known)})")
    return manifest


def stacks_for(workload: str) -> list[Manifest]:
    return [m for m in all_manifests().values() if m.implements(workload)]
