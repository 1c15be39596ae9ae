"""The request cycle every Python implementation shares: the spec's function table
(parameters and default error statuses), parameter and version checks, lock-conflict
retries, and the deliberate faults used to show the suite failing.

What a function reads, locks and writes is each implementation's own code, in its
stack's folder (implementations.py says where): this module only
hands it a parsed `Call` and takes back an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from dbstand.workloads.parking.conflicts import RETRIES, is_conflict
from dbstand.workloads.parking.protocol import (
    NOT_AVAILABLE,
    Answer,
    BadRequest,
    Call,
    Reply,
    parse_descr,
    parse_version,
)
from dbstand.workloads.parking.values import now

log = logging.getLogger("dbstand.workloads.parking")


class Service(Protocol):
    """One implementation's service for a whole server process."""

    stack: str

    def call(self, name: str, call: Call) -> Answer:
        """Run function `name` in one transaction: commit when it returns an answer,
        roll back when it raises (a `Reply` included) and re-raise."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Function:
    name: str
    params: frozenset[str]         # accepted parameters besides `version`
    default_error: str             # unexpected parameter or failure


def _fn(name: str, params: str, default_error: str) -> Function:
    return Function(name, frozenset(params.split()), default_error)


#: the spec's functions, in the study's table 1 order
FUNCTIONS: dict[str, Function] = {f.name: f for f in (
    _fn("get_service_info", "service_descr user_id", "not_available"),
    _fn("create_reservation", "service_descr price transaction_id user_id pay_from_balance",
        "not_available"),
    _fn("pay_reservation", "transaction_id", "bad_transaction"),
    _fn("get_user_account", "user_id", "bad_transaction"),
    _fn("stop_service", "transaction_id", "bad_transaction"),
    _fn("account_transfer", "transaction_id src_user_id dst_user_id", "bad_transaction"),
    _fn("cancel_reservation", "transaction_id", "bad_transaction"),
    _fn("check_plate_number", "registration_plate", "not_available"),
    _fn("leave_parking", "parking_id user_ticket", "not_available"),
    _fn("issue_ticket", "parking_id", "not_available"),
)}

#: switches that make a server skip one rule, so the suite can be shown failing; the
#: first two are honoured by each implementation's create_reservation, the last two
#: misspell refusals here (the reason as the status, a code on a lone status)
BROKEN = frozenset({"skip-price-check", "no-idempotent-replay", "reason-in-status",
                    "stray-status-code", "cancelled-before-paid"})


def _misspelled(answer: Answer, broken: frozenset[str]) -> Answer:
    """A refusal spelled the way a broken switch asks (the answer itself otherwise)."""
    status, code = answer.get("status"), answer.get("status_code")
    if "reason-in-status" in broken and status == NOT_AVAILABLE and code:
        rest = {k: v for k, v in answer.items() if k not in ("status", "status_code")}
        return {"status": code, **rest}
    if "stray-status-code" in broken and status != "success" and code is None:
        return {**answer, "status_code": status}
    return answer


def handle(name: str, params: Mapping[str, str], service: Service,
           broken: frozenset[str] = frozenset()) -> Answer:
    """Answer one call (without `ts`); BadRequest for an unknown function or a
    malformed service_descr (the transport answers those with HTTP 500)."""
    function = FUNCTIONS.get(name)
    if function is None:
        raise BadRequest(f"unknown function {name!r}")
    descr = {}
    if "service_descr" in params and "service_descr" in function.params:
        descr = parse_descr(params["service_descr"])
    if set(params) - function.params - {"version"}:
        return {"status": function.default_error}
    version = parse_version(params.get("version"))
    if version is None:
        return {"status": "bad_protocol"}
    call = Call(version=version, params=dict(params), descr=descr, now=now(), broken=broken)
    for attempt in range(1, RETRIES + 1):
        try:
            return service.call(name, call)
        except Reply as reply:
            return _misspelled(reply.answer, broken) if broken else reply.answer
        except Exception as exc:
            if attempt < RETRIES and is_conflict(exc):
                log.warning("%s: lock conflict, running it again (%s)", name, exc)
                continue
            log.exception("%s failed", name)
            break
    return {"status": function.default_error}
