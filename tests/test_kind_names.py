"""A database kind is one folder (targets/<kind>/): outside targets/ no code compares a
value with a kind's name or uses one as a key; it asks the kind's descriptor
(targets/kinds.py: embedded, paramstyle, default_stacks, run_lock, statements, ...)
or the SQL dialect it speaks (sql/dialects.py: forms, types, bulk loader, clauses).
The server stacks' own code (stacks/<language>/<name>/) is outside the package's rules.
"""

from __future__ import annotations

import ast
from pathlib import Path

from dbstand.targets.kinds import all_kinds

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "dbstand"

#: names that mean a kind: each kind's name and URL schemes
KIND_NAMES = frozenset(n for k in all_kinds().values() for n in (k.name, *k.schemes))


def _names_kind(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_NAMES


def _holds_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_kind(e) for e in node.elts)
    return _names_kind(node)


def kind_uses(tree: ast.AST) -> list[int]:
    """Lines comparing with a kind's name (==, !=, in, not in), keying a dict literal,
    subscripting, `.get()`-ing or `.startswith()`-ing by one, or naming a keyword."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            bad = any(_holds_kind(c) for c in [node.left, *node.comparators])
        elif isinstance(node, ast.Dict):
            bad = any(k is not None and _names_kind(k) for k in node.keys)
        elif isinstance(node, ast.Subscript):
            bad = _names_kind(node.slice)
        elif isinstance(node, ast.Call):
            bad = (isinstance(node.func, ast.Attribute)
                   and node.func.attr in ("get", "startswith", "pop", "setdefault")
                   and bool(node.args) and _holds_kind(node.args[0])) or any(
                k.arg in KIND_NAMES for k in node.keywords)
        else:
            bad = False
        if bad:
            lines.append(node.lineno)
    return lines


def _uses_by_file() -> dict[str, list[int]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "targets" or (rel.parts[0] == "stacks" and len(rel.parts) > 2):
            continue
        lines = kind_uses(ast.parse(path.read_text(), str(path)))
        if lines:
            found[rel.as_posix()] = sorted(lines)
    return found


def test_no_kind_name_outside_targets() -> None:
    found = _uses_by_file()
    assert not found, "kind names compared or used as keys outside targets/ (ask the " \
        "kind's descriptor or the SQL dialect instead):\n" + "\n".join(
            f"  {f}: lines {lines}" for f, lines in found.items())


def test_the_check_finds_each_form() -> None:
    code = ("a = t.kind == 'postgresql'\nb = k in ('sqlite', 'x')\nc = {'mysql': 1}\n"
            "d = m['tarantool']\ne = m.get('mongodb')\nf = t.kind == other\n")
    assert kind_uses(ast.parse(code)) == [1, 2, 3, 4, 5]
