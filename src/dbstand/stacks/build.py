"""Make a server stack runnable: its Debian packages, its Python venv and its build,
each done once and cached by a hash of the stack's sources.

The build output lives in `$DBSTAND_CACHE/stacks/<name>-<hash>/` (default
`~/.cache/dbstand`). A build runs in an empty temporary folder that is renamed into
place only when it succeeds, so a failed or interrupted build is never reused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dbstand.errors import MissingDependencyError, ServerError
from dbstand.paths import cache_dir
from dbstand.stacks.manifest import Manifest

LOG_TAIL_LINES = 12


def missing_debian(packages: tuple[str, ...]) -> list[str]:
    """The packages of `packages` that dpkg does not list as installed: one dpkg-query
    for all of them (every stack start asks)."""
    if not packages:
        return []
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n", *packages],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return list(packages)  # not a Debian system: cannot tell, say all
    installed = {line.split(" ", 1)[0] for line in out.splitlines()
                 if line.endswith(" install ok installed")}
    return [package for package in packages if package not in installed]


def install_debian(manifest: Manifest) -> None:
    """Install the stack's missing Debian packages (as root), or say how in one line."""
    missing = missing_debian(manifest.debian)
    if not missing:
        return
    command = "apt-get install -y --no-install-recommends " + " ".join(missing)
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise MissingDependencyError(f"stack {manifest.name!r} needs Debian packages that "
                                     f"are not installed: run `sudo {command}`")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "RUNLEVEL": "1"}
    policy = Path("/usr/sbin/policy-rc.d")
    created = False
    if not policy.exists():  # do not let the packages start their own daemons
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        created = True
    try:
        result = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                                 *missing], env=env, capture_output=True, text=True)
    finally:
        if created:
            policy.unlink(missing_ok=True)
    if result.returncode != 0:
        raise MissingDependencyError(f"stack {manifest.name!r}: `{command}` failed: "
                                     f"{_tail(result.stderr or result.stdout, 2)}")


def check_commands(manifest: Manifest) -> None:
    for program in manifest.commands:
        if shutil.which(program) is None:
            raise MissingDependencyError(f"stack {manifest.name!r} needs the program "
                                         f"{program!r}, which is not on PATH")


def check_modules(manifest: Manifest) -> None:
    """Modules a stack run by dbstand's interpreter imports (gunicorn, an ORM)."""
    import importlib.util

    missing = [m for m in manifest.modules if importlib.util.find_spec(m) is None]
    if missing:
        hint = f"pip install 'dbstand[{manifest.extra}]'" if manifest.extra else \
            f"pip install {' '.join(missing)}"
        raise MissingDependencyError(f"stack {manifest.name!r} needs {', '.join(missing)}, "
                                     f"which is not installed ({hint})")


def build_dir(manifest: Manifest) -> Path:
    """Where this version of the stack's build lives (it may not exist yet)."""
    return cache_dir() / "stacks" / f"{manifest.name}-{manifest.source_hash()}"


def python_for(manifest: Manifest, built: Path) -> str:
    """The interpreter the stack runs with."""
    if manifest.python == "own" and manifest.pip:
        return str(built / "venv" / "bin" / "python")
    return sys.executable


def ensure_built(manifest: Manifest, *, echo: bool = False) -> Path:
    """Install what the stack needs and build it unless a build of these sources exists.

    Returns the build folder. Raises one-line errors naming the stack and the tail of
    the build's output on failure.
    """
    install_debian(manifest)
    check_commands(manifest)
    check_modules(manifest)
    target = build_dir(manifest)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{manifest.name}-", dir=target.parent))
    log = staging.parent / f"{staging.name}.log"
    try:
        with log.open("w") as out:
            if manifest.python == "own" and manifest.pip:
                _make_venv(manifest, staging, out)
            if manifest.build is not None:
                _run_build(manifest, staging, out, echo)
        try:
            staging.rename(target)
        except OSError:  # another process built the same sources meanwhile
            if not target.is_dir():
                raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        with contextlib.suppress(OSError):
            if target.is_dir():
                shutil.move(str(log), target / "build.log")
            else:
                log.unlink()
    return target


def uv_bin() -> str:
    """uv, pinned in dbstand's own dependencies: the same pinned wheels pip would
    install, in about a tenth of pip's time (a new machine builds 16 stack venvs)."""
    from uv import find_uv_bin

    return find_uv_bin()


def _make_venv(manifest: Manifest, staging: Path, out: object) -> None:
    folder = staging / "venv"
    uv = uv_bin()
    # bytecode at install, as pip writes it: a stack started with PYTHONDONTWRITEBYTECODE
    # set would otherwise compile its imports again at every start
    steps = {"uv venv": [uv, "venv", "--quiet", "--python", sys.executable, str(folder)],
             "uv pip install": [uv, "pip", "install", "--quiet", "--compile-bytecode",
                                "--python", str(folder / "bin" / "python"), *manifest.pip]}
    for step, argv in steps.items():
        result = subprocess.run(argv, capture_output=True, text=True)
        out.write(result.stdout + result.stderr)  # type: ignore[attr-defined]
        if result.returncode != 0:
            raise ServerError(f"stack {manifest.name!r}: {step} failed: "
                              f"{_tail(result.stderr, 3)}")


def _run_build(manifest: Manifest, staging: Path, out: object, echo: bool) -> None:
    assert manifest.build is not None
    env = {**os.environ, **manifest.build.env, "DBSTAND_STACK_DIR": str(manifest.folder),
           "DBSTAND_BUILD_DIR": str(staging),
           "DBSTAND_PYTHON": python_for(manifest, staging), "DBSTAND_UV": uv_bin()}
    argv = manifest.build.resolved(manifest.folder)
    try:
        result = subprocess.run(argv, cwd=manifest.folder, env=env, capture_output=True,
                                text=True, timeout=manifest.build.timeout_s,
                                stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ServerError(f"stack {manifest.name!r}: build took longer than "
                          f"{manifest.build.timeout_s:.0f} s") from None
    except OSError as exc:
        raise ServerError(f"stack {manifest.name!r}: cannot run its build "
                          f"{argv[0]}: {exc.strerror}") from None
    out.write(result.stdout + result.stderr)  # type: ignore[attr-defined]
    if echo:
        print(result.stdout + result.stderr, end="")
    if result.returncode != 0:
        raise ServerError(f"stack {manifest.name!r}: build failed (exit "
                          f"{result.returncode}): {_tail(result.stderr or result.stdout, 4)}")


def _tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])
