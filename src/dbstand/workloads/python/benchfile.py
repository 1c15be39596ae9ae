"""A user's bench file (docs/python-bench.md): loaded by path, its functions checked,
and every failure inside it reported as one line naming the file and line.

    setup(conn)            optional, untimed, once per case, before the measurement
    operation(conn, rng)   required: one call is one operation; `async def` for
                           asyncio stacks; `rng` is the connection's random.Random
    teardown(conn)         optional, untimed, once per case, after it (also on failure)

Worker processes load the same file by its path.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dbstand.errors import CaseFailed, UserError

REQUIRED = "operation"
OPTIONAL = ("setup", "teardown")


@dataclass(frozen=True)
class BenchFile:
    path: Path
    operation: Callable[..., Any]
    setup: Callable[..., Any] | None
    teardown: Callable[..., Any] | None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.operation)

    def where(self, exc: BaseException) -> str:
        """`FILE:LINE: Type: message` for an exception raised inside the file (the
        innermost of its frames), so a failed case says where."""
        line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if Path(frame.filename).resolve() == self.path:
                line = frame.lineno
        text = " ".join(str(exc).split())
        place = f"{self.path}:{line}" if line else str(self.path)
        return f"{place}: {type(exc).__name__}" + (f": {text}" if text else "")

    def failed(self, exc: BaseException) -> CaseFailed:
        return CaseFailed(self.where(exc))


def _import(path: Path) -> ModuleType:
    name = f"dbstand_bench_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"--file {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise UserError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if Path(frame.filename).resolve() == path:
                line = frame.lineno
        raise UserError(f"{path}:{line or 1}: importing it raised {type(exc).__name__}: "
                        f"{' '.join(str(exc).split())}") from None
    sys.modules[name] = module
    return module


def _arity(fn: Callable[..., Any], want: int, what: str, path: Path) -> None:
    try:
        inspect.signature(fn).bind(*range(want))
    except TypeError:
        line = fn.__code__.co_firstlineno if hasattr(fn, "__code__") else 1
        raise UserError(f"{path}:{line}: {what} must take {want} argument(s): "
                        f"{what}({', '.join(['conn', 'rng'][:want])})") from None


def load_bench(file: str) -> BenchFile:
    """Load and check `file`; every mistake is one UserError line with file and line."""
    path = Path(file).expanduser()
    if not path.is_file():
        raise UserError(f"--file {file}: no such file")
    path = path.resolve()
    module = _import(path)
    operation = getattr(module, REQUIRED, None)
    if not callable(operation):
        raise UserError(f"{path}: no function {REQUIRED}(conn, rng) in the file")
    _arity(operation, 2, REQUIRED, path)
    hooks: dict[str, Callable[..., Any] | None] = {}
    for name in OPTIONAL:
        fn = getattr(module, name, None)
        if fn is not None:
            if not callable(fn):
                raise UserError(f"{path}: {name} must be a function")
            _arity(fn, 1, name, path)
            if inspect.iscoroutinefunction(fn) != inspect.iscoroutinefunction(operation):
                line = fn.__code__.co_firstlineno
                raise UserError(f"{path}:{line}: {name} must be "
                                f"{'async ' if inspect.iscoroutinefunction(operation) else ''}"
                                "def like operation")
        hooks[name] = fn
    return BenchFile(path, operation, hooks["setup"], hooks["teardown"])
