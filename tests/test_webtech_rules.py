"""The webtech answer rules on answers built here: the fixed-bytes tests want their
bytes exactly, the plain-text tests a text type and their own body."""

from __future__ import annotations

from dbstand.workloads.webtech.rules import (
    BIG_BYTES,
    FILE_BYTES,
    HELLO,
    LOOP_PIECES,
    STATIC_CHECKS,
    Answer,
)


def _answer(body: bytes, content_type: str = "text/plain") -> Answer:
    return Answer(200, {"content-type": content_type}, body)


def test_fixed_bytes_pass_whole_and_fail_cut() -> None:
    for test, expected, what in (("file", FILE_BYTES, "file"), ("big", BIG_BYTES, "block")):
        check = STATIC_CHECKS[test]
        assert check(_answer(expected)) is None
        assert check(_answer(expected[:-1])) == (
            f"body is {len(expected) - 1} bytes, not the {len(expected)}-byte {what}")


def test_text_tests_want_a_text_type_and_their_body() -> None:
    bodies = {"hello": HELLO + b"\n", "loop": HELLO * LOOP_PIECES}
    for test, body in bodies.items():
        check = STATIC_CHECKS[test]
        assert check(_answer(body)) is None
        assert check(_answer(body, "text/html; charset=utf-8")) is None
        assert check(_answer(body, "application/json")) == (
            "Content-Type 'application/json', not text/html or text/plain")
        assert check(_answer(b"Hello")) is not None
