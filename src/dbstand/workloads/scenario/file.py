"""Scenario files (docs/http-scenarios.md): TOML, read and checked here into the
engine's `Scenario`; every mistake is one line naming the file and the key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from dbstand.errors import UserError
from dbstand.loadgen.scenario import Scenario, Step

_STEP_KEYS = {"name", "method", "path", "headers", "body", "capture", "expect_status",
              "expect_json", "expect_body", "think_ms"}
_TOP_KEYS = {"name", "vars", "step"}


def _strmap(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise UserError(f"{where} must be a table of names to values")
    out = {}
    for k, v in value.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        if not isinstance(v, str | int | float):
            raise UserError(f"{where}.{k} must be a string or a number")
        out[str(k)] = str(v)
    return out


def _step(data: Any, where: str, index: int) -> Step:
    if not isinstance(data, dict):
        raise UserError(f"{where} must be a table")
    unknown = sorted(set(data) - _STEP_KEYS)
    if unknown:
        raise UserError(f"{where}.{unknown[0]}: unknown key (known: "
                        f"{', '.join(sorted(_STEP_KEYS))})")
    path = data.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise UserError(f"{where}.path must be a path starting with /")
    method = data.get("method", "GET")
    if not isinstance(method, str) or not method.isalpha():
        raise UserError(f"{where}.method must be an HTTP method such as GET or POST")
    body = data.get("body", "")
    if not isinstance(body, str):
        raise UserError(f"{where}.body must be a string")
    status = data.get("expect_status")
    if status is not None and (not isinstance(status, int) or not 100 <= status <= 599):
        raise UserError(f"{where}.expect_status must be an HTTP status (100-599)")
    think = data.get("think_ms", 0)
    if isinstance(think, bool) or not isinstance(think, int | float) or \
            not 0 <= think <= 3_600_000:
        raise UserError(f"{where}.think_ms must be milliseconds between 0 and 3600000")
    contains = data.get("expect_body", [])
    if isinstance(contains, str):
        contains = [contains]
    if not isinstance(contains, list) or not all(isinstance(c, str) and c for c in contains):
        raise UserError(f"{where}.expect_body must be a text or a list of texts")
    return Step(name=str(data.get("name") or f"step{index + 1}"), path=path,
                method=method.upper(), headers=_strmap(data.get("headers", {}),
                                                       f"{where}.headers"),
                body=body, captures=_strmap(data.get("capture", {}), f"{where}.capture"),
                expect=_strmap(data.get("expect_json", {}), f"{where}.expect_json"),
                status=status, body_contains=tuple(contains), think_ms=float(think))


def load_scenario(file: str) -> tuple[str, Scenario]:
    """(its name, the scenario) from a TOML file."""
    path = Path(file)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"--scenario {file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--scenario {file}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{file}: {exc}") from None
    try:
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise UserError(f"{unknown[0]}: unknown key (known: name, vars, [[step]])")
        steps = data.get("step")
        if not isinstance(steps, list) or not steps:
            raise UserError("step: the scenario needs at least one [[step]]")
        scenario = Scenario(steps=[_step(s, f"step[{i + 1}]", i) for i, s in enumerate(steps)],
                            vars=_strmap(data.get("vars", {}), "vars"))
    except UserError as exc:
        raise UserError(f"{file}: {exc}") from None
    return str(data.get("name") or path.stem), scenario
