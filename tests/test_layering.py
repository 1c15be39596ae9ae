"""The layering of ARCHITECTURE.md, held: modules grouped by their first subpackage
(dbstand.workloads, dbstand.cli, dbstand.targets, ...; a top-level module is its own
group) import only groups below them, and no two groups import each other, directly
or in a ring. An import is any `import`/`from` statement anywhere in a module (at its
top, in a function, under TYPE_CHECKING) and any string naming a dbstand module
(`"dbstand.x.y"` or `"dbstand.x.y:attr"`, what importlib and the lazy CLI load).
The server stacks' own code (stacks/<language>/<name>/) is not part of the package's
layering: it runs in its own process.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "dbstand"

#: ARCHITECTURE.md's "Layering", lowest first
LAYERS = ("errors", "paths", "console", "interrupts", "proctree", "engine", "targets", "drivers",
          "sql", "profiles", "probes", "network", "results", "loadgen", "modes", "stacks",
          "distributed",
          "report", "workloads", "studies", "cli", "__main__")

_MODULE_STRING = re.compile(r"^(dbstand(?:\.\w+)+)(?::[\w.]+)?$")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_stack_code(path: Path) -> bool:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] == "stacks" and len(rel) > 2


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every dbstand module `path` names, with the line."""
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            found.append((base, node.lineno))
            found += [(f"{base}.{a.name}", node.lineno) for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _MODULE_STRING.match(node.value)
            if m:
                found.append((m.group(1), node.lineno))
    return [(name, line) for name, line in found if name.startswith("dbstand.")]


def group_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def group_edges() -> dict[tuple[str, str], list[str]]:
    """(importing group, imported group) -> the places (file:line) that make the edge."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py") if not _is_stack_code(p)}
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, path in modules.items():
        for target, line in _imports(path):
            while target not in modules and "." in target:  # `from pkg import name`
                target = target.rpartition(".")[0]
            if target not in modules or target == "dbstand":
                continue
            a, b = group_of(name), group_of(target)
            if a != b:
                edges[(a, b)].append(f"{path.relative_to(PACKAGE)}:{line}")
    return edges


def test_every_group_has_a_layer() -> None:
    groups = {group_of(_module_name(p)) for p in PACKAGE.rglob("*.py")
              if not _is_stack_code(p)} - {"dbstand"}
    assert groups <= set(LAYERS), f"add to LAYERS and ARCHITECTURE.md: {groups - set(LAYERS)}"


def test_no_upward_import() -> None:
    upward = {f"{a} -> {b}": places for (a, b), places in group_edges().items()
              if a in LAYERS and b in LAYERS and LAYERS.index(b) > LAYERS.index(a)}
    assert not upward, "imports against ARCHITECTURE.md's layering:\n" + "\n".join(
        f"  {edge}: {', '.join(sorted(set(places))[:5])}" for edge, places in upward.items())


def test_no_ring_between_groups() -> None:
    """No group reaches itself through other groups (follows from the order, and is
    checked on its own so a wrong LAYERS cannot hide one)."""
    edges = group_edges()
    succ: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    rings = []
    for start in list(succ):
        seen, stack = set(), [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in succ[node]:
                if nxt == start:
                    rings.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    assert not rings, "import rings between groups:\n" + "\n".join(sorted(set(rings)))


def test_the_check_sees_function_local_and_importlib_imports(tmp_path: Path) -> None:
    """The reader finds what a module-top grep would miss."""
    source = tmp_path / "m.py"
    source.write_text(
        "import typing\n"
        "if typing.TYPE_CHECKING:\n    from dbstand.cli import app\n"
        "def f():\n    from ..workloads import base\n"
        "    return importlib.import_module('dbstand.report.model')\n"
        "ENTRY = 'dbstand.studies.kv:KvStudy'\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "dbstand"
    try:
        PACKAGE.mkdir()
        (PACKAGE / "targets").mkdir()
        moved = PACKAGE / "targets" / "m.py"
        source.rename(moved)
        names = {name for name, _ in _imports(moved)}
    finally:
        PACKAGE = saved
    assert {"dbstand.cli.app", "dbstand.workloads.base", "dbstand.report.model",
            "dbstand.studies.kv"} <= names
