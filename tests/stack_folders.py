"""A server stack of the user's own, written into a folder outside the package: its
stack.toml, a Python server on the standard library, and a start script that runs
it with dbstand's interpreter."""

from __future__ import annotations

from pathlib import Path


def write_stack(root: Path, name: str, manifest: str, server: str) -> Path:
    """`root/name/` with the manifest (its `{name}` filled in) and `server.py`."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "stack.toml").write_text(manifest.replace("{name}", name))
    (folder / "server.py").write_text(server)
    start = folder / "start.sh"
    start.write_text('#!/bin/sh\nexec "$DBSTAND_PYTHON" "$DBSTAND_STACK_DIR/server.py"\n')
    start.chmod(0o755)
    return folder
