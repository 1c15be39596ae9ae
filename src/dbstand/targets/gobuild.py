"""Go programs dbstand builds itself (FerretDB, Toxiproxy): built once per machine and
user from a folder of pinned sources (go.mod + go.sum + main.go) with the ordinary Go
toolchain and its module proxy, kept in the user's cache folder under a hash of the
sources, so a changed pin gets a fresh build and an unchanged one is never rebuilt."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dbstand.errors import ServerError

#: where Go's own tarball installs it (often not on PATH for services and sudo)
GO_FALLBACKS = ("/usr/local/go/bin/go",)
BUILD_TIMEOUT_S = 1200.0
SOURCE_FILES = ("go.mod", "go.sum", "main.go")


def cache_root() -> Path:
    """Where built programs are kept: `$DBSTAND_CACHE`, else `$XDG_CACHE_HOME/dbstand`,
    else `~/.cache/dbstand` (the stacks' build cache follows the same rule)."""
    root = os.environ.get("DBSTAND_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "dbstand" if xdg else Path.home() / ".cache" / "dbstand"


@dataclass(frozen=True)
class GoProgram:
    """One program: its name (the cache entry and binary), its source folder, the
    environment variable naming a ready-made binary instead, and the package to build
    (`.`: the folder's own main.go)."""

    name: str
    title: str
    source_dir: Path
    override_env: str
    package: str = "."

    def source_digest(self) -> str:
        """Hash of the Go sources: a changed pin or wrapper gets a fresh build."""
        digest = hashlib.sha256()
        for name in SOURCE_FILES:
            digest.update(name.encode() + b"\0" + (self.source_dir / name).read_bytes()
                          + b"\0")
        return digest.hexdigest()[:16]

    def binary(self, *, quiet: bool = False) -> Path:
        """The program, built on first use into the cache folder.

        $<override_env> names a ready-made one instead. The build goes into a temp
        folder beside the cache entry, renamed into place only when it succeeded, under
        a lock so that two dbstand processes do not build it twice.
        """
        override = os.environ.get(self.override_env)
        if override:
            if not os.access(override, os.X_OK):
                raise ServerError(f"{self.override_env}={override} is not an executable file")
            return Path(override)
        root = cache_root()
        final = root / f"{self.name}-{self.source_digest()}"
        binary = final / self.name
        if binary.is_file():
            return binary
        go = find_go(self.title)
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{self.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if binary.is_file():  # built by another process while we waited
                return binary
            if not quiet:
                print(f"building {self.title} with the Go toolchain (once; a few "
                      "CPU-minutes)...", flush=True)
            work = Path(tempfile.mkdtemp(prefix=f"{final.name}.tmp-", dir=root))
            try:
                self._build(go, work / self.name)
                os.chmod(work, 0o755)
                os.rename(work, final)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return binary

    def version(self, binary: Path) -> str:
        """What `binary -version` prints ("FerretDB 1.24.0"): it starts with the title,
        or the program is not this one."""
        try:
            out = subprocess.run([str(binary), "-version"], capture_output=True, text=True,
                                 timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ServerError(f"cannot run {binary}: {exc}") from None
        text = out.stdout.strip()
        if out.returncode != 0 or not text.startswith(f"{self.title} "):
            raise ServerError(f"{binary} is not dbstand's {self.title} program")
        return text

    def _build(self, go: str, output: Path) -> None:
        # read-only module mode: the pins in go.sum are the whole truth, and the source
        # folder (perhaps in site-packages) is never written
        argv = [go, "build", "-mod=readonly", "-trimpath", "-buildvcs=false", "-o",
                str(output), self.package]
        env = {**os.environ, "CGO_ENABLED": "0"}
        try:
            proc = subprocess.run(argv, cwd=self.source_dir, env=env, capture_output=True,
                                  text=True, timeout=BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ServerError(f"building {self.title} timed out after "
                              f"{BUILD_TIMEOUT_S:.0f} s") from None
        except OSError as exc:
            raise ServerError(f"cannot run {go}: {exc.strerror}") from None
        if proc.returncode != 0 or not output.is_file():
            lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
            raise ServerError(f"building {self.title} failed: "
                              f"{lines[-1] if lines else 'no output'}")


def find_go(title: str) -> str:
    """The `go` command: $DBSTAND_GO, else PATH, else the tarball's /usr/local/go."""
    for candidate in (os.environ.get("DBSTAND_GO"), shutil.which("go"), *GO_FALLBACKS):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ServerError(
        f"building {title} needs the Go toolchain (go >= 1.22) and `go` was not found: "
        "install it from https://go.dev/dl (Debian 12's golang-go is 1.19, too old) or set "
        "DBSTAND_GO to its path")


def reachable_copy(built: Path, folder: Path) -> Path:
    """The program as a service user can run it: a hard link (or copy) in `folder`.

    The cache sits in the invoking user's home, which another account may not enter
    (root's is 0700). Call after chowning `folder`, so the cached program keeps its
    owner.
    """
    local = folder / built.name
    try:
        os.link(built, local)
    except OSError:
        shutil.copy2(built, local)
    return local
