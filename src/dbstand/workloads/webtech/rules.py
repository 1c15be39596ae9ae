"""What each webtech answer must be (docs/stack-manifest.md, "The webtech answers"),
checked over a real HTTP connection before any stack is measured, the way
TechEmpower verifies its implementations. A failed check names the test and why."""

from __future__ import annotations

import email.utils
import http.client
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dbstand.workloads.served import Check

STATIC_DIR = Path(__file__).resolve().parent / "static"
FILE_BYTES = (STATIC_DIR / "file.html").read_bytes()
BIG_BYTES = (STATIC_DIR / "big.txt").read_bytes()
HELLO = b"Hello, World"
LOOP_PIECES = 5_462
TESTS = ("file", "hello", "loop", "big", "db", "cache", "json", "plaintext")
STUDY_TESTS = ("file", "hello", "loop", "big", "db", "cache")
_WORLD = re.compile(rb"world id=(\d+) randomnumber=(\d+)")
_COUNT = re.compile(rb"count=(\d+)")
CACHE_SECONDS = 15


@dataclass
class Answer:
    status: int
    headers: dict[str, str]    # lower-case names
    body: bytes


Verdict = Check


def connection(base_url: str, timeout_s: float = 10.0) -> http.client.HTTPConnection:
    host, _, port = base_url.removeprefix("http://").partition(":")
    return http.client.HTTPConnection(host, int(port), timeout=timeout_s)


def ask(conn: http.client.HTTPConnection, path: str) -> Answer:
    """One GET on a kept-alive connection (a client of the load keeps its connection,
    so a stack's per-process cache serves it)."""
    conn.request("GET", path)
    response = conn.getresponse()
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                  response.read())


def fetch(base_url: str, path: str, timeout_s: float = 10.0) -> Answer:
    """One GET on a new connection."""
    conn = connection(base_url, timeout_s)
    try:
        return ask(conn, path)
    finally:
        conn.close()


def _type(answer: Answer) -> str:
    return answer.headers.get("content-type", "").split(";")[0].strip().lower()


def _common(answer: Answer) -> str | None:
    """TechEmpower's general rules: 200, a Date and a Server header."""
    if answer.status != 200:
        return f"HTTP {answer.status}"
    for header in ("date", "server"):
        if header not in answer.headers:
            return f"no {header.title()} header"
    return None


def _text(answer: Answer) -> str | None:
    """The rule of the plain-text tests: text/html or text/plain."""
    if _type(answer) not in ("text/html", "text/plain"):
        return f"Content-Type {_type(answer)!r}, not text/html or text/plain"
    return None


def _exact(answer: Answer, expected: bytes, what: str) -> str | None:
    """The rule of the tests that serve fixed bytes: those bytes, to the byte."""
    if answer.body != expected:
        return f"body is {len(answer.body)} bytes, not the {len(expected)}-byte {what}"
    return None


def check_file(answer: Answer) -> str | None:
    return _exact(answer, FILE_BYTES, "file")


def check_hello(answer: Answer) -> str | None:
    if wrong := _text(answer):
        return wrong
    if answer.body.rstrip(b"\n") != HELLO or answer.body.count(b"\n") > 1:
        return f"body {answer.body[:40]!r}, not 'Hello, World'"
    return None


def check_loop(answer: Answer) -> str | None:
    if wrong := _text(answer):
        return wrong
    if answer.body != HELLO * LOOP_PIECES:
        return (f"body of {len(answer.body)} bytes is not 'Hello, World' x {LOOP_PIECES} "
                f"({len(HELLO) * LOOP_PIECES} bytes)")
    return None


def check_big(answer: Answer) -> str | None:
    return _exact(answer, BIG_BYTES, "block")


def check_json(answer: Answer) -> str | None:
    if _type(answer) != "application/json":
        return f"Content-Type {_type(answer)!r}, not application/json"
    try:
        value = json.loads(answer.body)
    except ValueError:
        return "body is not JSON"
    if value != {"message": "Hello, World!"}:
        return f"body {value!r}, not {{'message': 'Hello, World!'}}"
    return None


def check_plaintext(answer: Answer) -> str | None:
    if _type(answer) != "text/plain":
        return f"Content-Type {_type(answer)!r}, not text/plain"
    if answer.body.rstrip(b"\n") != b"Hello, World!":
        return f"body {answer.body[:40]!r}, not 'Hello, World!'"
    return None


def world_of(answer: Answer) -> tuple[int, int, int] | str:
    """(id, randomnumber, count) shown by a db page, or why it cannot be read."""
    if _type(answer) not in ("text/html", "text/plain"):
        return f"Content-Type {_type(answer)!r}, not text/html"
    world, count = _WORLD.search(answer.body), _COUNT.search(answer.body)
    if world is None or count is None:
        return "the page does not show 'world id=N randomnumber=M' and 'count=C'"
    return int(world[1]), int(world[2]), int(count[1])


def check_expires(answer: Answer, now: float) -> str | None:
    expires = answer.headers.get("expires")
    if expires is None:
        return "no Expires header"
    try:
        when = email.utils.parsedate_to_datetime(expires).timestamp()
    except (TypeError, ValueError):
        return f"Expires {expires!r} is not an HTTP date"
    ahead = when - now
    if not CACHE_SECONDS - 3 <= ahead <= CACHE_SECONDS + 2:
        return f"Expires is {ahead:.0f} s ahead, not {CACHE_SECONDS}"
    return None


STATIC_CHECKS: dict[str, Callable[[Answer], str | None]] = {
    "file": check_file, "hello": check_hello, "loop": check_loop, "big": check_big,
    "json": check_json, "plaintext": check_plaintext,
}


class DatabaseView:
    """What the checks need of the database: the real rows and a statement counter."""

    def __init__(self, rows: Callable[[list[int]], dict[int, int]], total: int,
                 selects_during: Callable[[Callable[[], object]], int] | None):
        self.rows = rows
        self.total = total
        #: runs a callable and returns the SELECTs the server ran meanwhile; None: the
        #: server's statements cannot be counted
        self.selects_during = selects_during


def check_db_pages(base_url: str, db: DatabaseView, tests: tuple[str, ...]) -> list[Verdict]:
    verdicts = []
    if "db" in tests:
        verdicts.append(_check_db(base_url, db))
    if "cache" in tests:
        verdicts.append(_check_cache(base_url, db))
    return verdicts


def _check_db(base_url: str, db: DatabaseView) -> Verdict:
    shown: list[tuple[int, int, int]] = []
    for _ in range(3):
        answer = fetch(base_url, "/db")
        problem = _common(answer)
        seen = world_of(answer) if problem is None else problem
        if isinstance(seen, str):
            return Verdict("db", False, seen)
        shown.append(seen)
    real = db.rows([row_id for row_id, _, _ in shown])
    for row_id, number, count in shown:
        if real.get(row_id) != number:
            return Verdict("db", False, f"shows id={row_id} randomnumber={number}, the "
                                        f"database has {real.get(row_id)}")
        if count != db.total:
            return Verdict("db", False, f"shows count={count}, the table has {db.total}")
    if db.selects_during is not None:
        # the server's counters are global: other clients can only add to a window,
        # so the best of three windows is the page's own count
        ran = max(db.selects_during(lambda: fetch(base_url, "/db")) for _ in range(3))
        if ran < 2:
            return Verdict("db", False, f"one request ran {ran} SELECT(s), not two")
    return Verdict("db", True)


def _check_cache(base_url: str, db: DatabaseView) -> Verdict:
    """Over one kept-alive connection, as a load client asks: the first answer fills the
    cache (or comes from it), the next ones while fresh must be the same page with no
    SELECT run meanwhile."""
    conn = connection(base_url)
    try:
        first = ask(conn, "/cache")
        problem = _common(first) or check_expires(first, time.time())
        seen = world_of(first) if problem is None else problem
        if isinstance(seen, str):
            return Verdict("cache", False, seen)
        if db.rows([seen[0]]).get(seen[0]) != seen[1]:
            return Verdict("cache", False, "the rows shown are not the database's")
        answers: list[Answer] = []
        if db.selects_during is not None:  # as for db: the quietest of three windows
            ran = min(db.selects_during(lambda: answers.append(ask(conn, "/cache")))
                      for _ in range(3))
        else:
            answers.append(ask(conn, "/cache"))
            ran = 0
    finally:
        conn.close()
    if any(answer.body != first.body for answer in answers):
        return Verdict("cache", False, "a request while fresh gave another page")
    if ran > 0:
        return Verdict("cache", False, f"a request while fresh ran {ran} SELECT(s)")
    note = "" if db.selects_during is not None else "statements not countable: freshness " \
                                                    "checked by the body only"
    return Verdict("cache", True, note)


def verify_static(base_url: str, tests: tuple[str, ...]) -> list[Verdict]:
    verdicts = []
    for test in tests:
        check = STATIC_CHECKS.get(test)
        if check is None:
            continue
        try:
            answer = fetch(base_url, f"/{test}")
        except (OSError, http.client.HTTPException) as exc:
            verdicts.append(Verdict(test, False, f"no answer: {exc}"))
            continue
        problem = _common(answer) or check(answer)
        verdicts.append(Verdict(test, problem is None, problem or ""))
    return verdicts


__all__ = ["TESTS", "Answer", "DatabaseView", "Verdict", "check_db_pages",
           "fetch", "verify_static"]
