"""Request and answer shapes shared by every implementation: protocol versions,
descriptor keys, the early-answer exception and the small parsers the rules use."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

VERSIONS = (0, 1, 2)

#: descriptor keys by protocol version: logical field -> key in service_descr
DESCR_KEYS: dict[int, dict[str, str]] = {
    0: {"parking": "parking_object_id", "plate": "plate_number", "duration": "hours",
        "ticket": "user_ticket"},
    1: {"parking": "parking_id", "plate": "registration_plate", "duration": "duration",
        "ticket": "user_ticket"},
}
DESCR_KEYS[2] = DESCR_KEYS[1]

Answer = dict[str, Any]

#: issue_ticket draws ticket numbers from this range (inclusive)
TICKETS = (1_000_000_000, 1_999_999_999)

_DIGITS = re.compile(r"^[0-9]+$")


class Reply(Exception):
    """An answer decided before the end of a function; its transaction rolls back.

    Every non-success status, and every success that writes nothing (idempotent
    replays, status_code paths), leaves through here, as the study's ApiResult did.
    """

    def __init__(self, status: str, status_code: str | None = None, **fields: Any):
        super().__init__(status)
        self.answer: Answer = {"status": status}
        if status_code is not None:
            self.answer["status_code"] = status_code
        self.answer.update(fields)


#: the status of every validation refusal of get_service_info and create_reservation
NOT_AVAILABLE = "not_available"


def refusal(reason: str) -> Reply:
    """A validation refusal as the wire spells it (spec "How refusals are spelled"):
    status `not_available`, the reason (`invalid_user_id`, ...) in status_code, so
    that a client checking `status` first and `status_code` second accepts it."""
    return Reply(NOT_AVAILABLE, reason)


class BadRequest(Exception):
    """Unknown function or malformed service_descr: HTTP 500 with a JSON body."""


@dataclass
class Call:
    """One request as the rules see it."""

    version: int
    params: dict[str, str]
    descr: dict[str, str] = field(default_factory=dict)
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now().replace(microsecond=0))
    broken: frozenset[str] = frozenset()

    def param(self, name: str) -> str:
        """A top-level parameter ("" when absent)."""
        return self.params.get(name, "")

    def field(self, name: str) -> str:
        """A service_descr field by logical name (parking, plate, duration, ticket)."""
        return self.descr.get(DESCR_KEYS[self.version][name], "")


def success(**fields: Any) -> Answer:
    return {"status": "success", **fields}


def server_ts() -> str:
    """The `ts` of every answer: Unix time with 3 decimals."""
    return f"{time.time():.3f}"


def parse_version(text: str | None) -> int | None:
    """The protocol version (absent or empty: 0); None when not 0, 1 or 2."""
    if text is None or text == "":
        return 0
    if not _DIGITS.match(text):
        return None
    value = int(text)
    return value if value in VERSIONS else None


def parse_descr(text: str) -> dict[str, str]:
    """service_descr: a JSON object whose values are all strings, else BadRequest."""
    try:
        value = json.loads(text)
    except ValueError:
        raise BadRequest("malformed service_descr: not JSON") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRequest("malformed service_descr: expected a JSON object of strings")
    return value


def parse_decimal(text: str) -> Decimal | None:
    """A finite decimal number, or None."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        return None
    return value if value.is_finite() else None


def parse_positive_int(text: str) -> int | None:
    return int(text) if _DIGITS.match(text) and int(text) > 0 else None
