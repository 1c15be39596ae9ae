"""Is a stack's answer to `GET /api/posts/query/` right? Checked before it is measured.

A stack that answers wrongly is reported as failed, not measured (methodology).
Right means: 200, a JSON array of 30 items (fewer only when the set is smaller),
each exactly `{"_id", "title", "created"}` with the id as a string and `created`
as "YYYY-mm-dd HH:MM:SS" or null, and the same documents, in the same order, as
the data set of that size and seed starts with (see data.py for why every target
returns those). Plus TechEmpower's header rules from docs/stack-manifest.md.
"""

from __future__ import annotations

import http.client
import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dbstand.workloads.docquery.data import (
    DEFAULT_SEED,
    DEFAULT_SIZE,
    PAGE,
    expected_page,
    load_url,
    loaded_set,
)
from dbstand.workloads.served import Check, ServedWorkload

if TYPE_CHECKING:
    from dbstand.stacks.launcher import StackHandle
    from dbstand.targets.url import TargetURL

PATH = "/api/posts/query/"
_CREATED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
_KEYS = {"_id", "title", "created"}


def check_answer(body: bytes | str, expected: list[dict[str, Any]]) -> list[str]:
    """Problems with an answer body, empty when it is right."""
    try:
        items = json.loads(body)
    except ValueError as exc:
        return [f"not JSON: {exc}"]
    if not isinstance(items, list):
        return [f"not a JSON array but {type(items).__name__}"]
    problems: list[str] = []
    if len(items) != len(expected):
        problems.append(f"{len(items)} items, expected {len(expected)}")
    for index, item in enumerate(items):
        where = f"item {index}"
        if not isinstance(item, dict):
            problems.append(f"{where} is not an object")
            continue
        if set(item) != _KEYS:
            problems.append(f"{where} has keys {sorted(item)}, expected {sorted(_KEYS)}")
            continue
        if not isinstance(item["_id"], str):
            problems.append(f"{where}: _id is not a string")
        if not isinstance(item["title"], str):
            problems.append(f"{where}: title is not a string")
        created = item["created"]
        if created is not None and not (isinstance(created, str) and _CREATED.match(created)):
            problems.append(f"{where}: created {created!r} is not 'YYYY-mm-dd HH:MM:SS' or null")
        if index < len(expected) and item != expected[index]:
            problems.append(f"{where} is {item}, expected {expected[index]}")
        if len(problems) >= 5:
            problems.append("...")
            break
    return problems


def check_headers(status: int, headers: dict[str, str]) -> list[str]:
    """Problems with the status line and headers (names in lower case)."""
    problems = []
    if status != 200:
        problems.append(f"status {status}, expected 200")
    ctype = headers.get("content-type", "")
    if not ctype.lower().startswith("application/json"):
        problems.append(f"Content-Type {ctype!r}, expected application/json")
    if "content-length" not in headers and headers.get("transfer-encoding") != "chunked":
        problems.append("neither Content-Length nor chunked encoding")
    for name in ("date", "server"):
        if name not in headers:
            problems.append(f"no {name.title()} header")
    return problems


def check_endpoint(base_url: str, size: int, seed: int = DEFAULT_SEED,
                   timeout_s: float = 10.0) -> list[str]:
    """GET the endpoint of a running stack (`http://127.0.0.1:PORT`) and check it
    against the data set of `size` documents of `seed`; problems, empty when right."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not an http:// URL: {base_url}")
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout_s)
    try:
        conn.request("GET", PATH, headers={"Accept": "application/json"})
        response = conn.getresponse()
        body = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
    except OSError as exc:
        return [f"GET {PATH} failed: {exc}"]
    finally:
        conn.close()
    problems = check_headers(response.status, headers)
    if response.status == 200:
        problems += check_answer(body, expected_page(size, seed, PAGE))
    else:
        problems.append(f"body: {body[:200]!r}")
    return problems


def served(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> ServedWorkload:
    """docquery for the shared launch -> verify -> load path, with a set of `size`."""

    def prepare(target: TargetURL, prefix: str) -> None:
        result = load_url(target, size, seed, prefix=prefix)
        if not result.reused:
            print(result.describe(), flush=True)

    return ServedWorkload("docquery", prepare=prepare, verify=verify_stack)


def verify_stack(handle: StackHandle, target: TargetURL | None, prefix: str) -> list[Check]:
    """The one test of a running stack, against the set its target holds."""
    if target is None:
        return [Check("query", False, "docquery stacks read a database: no target given")]
    loaded = loaded_set(target, prefix)
    if loaded is None:
        return [Check("query", False, f"no complete docquery set under prefix {prefix} "
                                      "in the target: load it first")]
    size, seed = loaded
    problems = check_endpoint(handle.base_url, size, seed)
    return [Check("query", not problems, "; ".join(problems))]


SERVED = served()
