"""The dispatch table and the request cycle every implementation shares:
parameter check, version check, one transaction, default error statuses."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dbstand.workloads.parking import logic
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
from dbstand.workloads.parking.repo import Backend, Repo
from dbstand.workloads.parking.values import now

log = logging.getLogger("dbstand.workloads.parking")


@dataclass(frozen=True)
class Function:
    name: str
    params: frozenset[str]         # accepted parameters besides `version`
    default_error: str             # unexpected parameter or failure
    rules: Callable[[Call, Repo], Answer]


def _fn(rules: Callable[[Call, Repo], Answer], params: str, default_error: str) -> Function:
    return Function(rules.__name__, frozenset(params.split()), default_error, rules)


FUNCTIONS: dict[str, Function] = {f.name: f for f in (
    _fn(logic.get_service_info, "service_descr user_id", "not_available"),
    _fn(logic.create_reservation,
        "service_descr price transaction_id user_id pay_from_balance", "not_available"),
    _fn(logic.pay_reservation, "transaction_id", "bad_transaction"),
    _fn(logic.cancel_reservation, "transaction_id", "bad_transaction"),
    _fn(logic.stop_service, "transaction_id", "bad_transaction"),
    _fn(logic.get_user_account, "user_id", "bad_transaction"),
    _fn(logic.account_transfer, "transaction_id src_user_id dst_user_id", "bad_transaction"),
    _fn(logic.issue_ticket, "parking_id", "not_available"),
    _fn(logic.leave_parking, "parking_id user_ticket", "not_available"),
    _fn(logic.check_plate_number, "registration_plate", "not_available"),
)}

#: switches that make a server skip one rule, so the suite can be shown failing;
#: the last two misspell refusals (the reason as the status, a code on a lone status)
BROKEN = frozenset({"skip-price-check", "no-idempotent-replay", "reason-in-status",
                    "stray-status-code"})


def _misspelled(answer: Answer, broken: frozenset[str]) -> Answer:
    """A refusal spelled the way a broken switch asks (the answer itself otherwise)."""
    status, code = answer.get("status"), answer.get("status_code")
    if "reason-in-status" in broken and status == NOT_AVAILABLE and code:
        rest = {k: v for k, v in answer.items() if k not in ("status", "status_code")}
        return {"status": code, **rest}
    if "stray-status-code" in broken and status != "success" and code is None:
        return {**answer, "status_code": status}
    return answer


def handle(name: str, params: Mapping[str, str], backend: Backend,
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
            return backend.run(lambda repo: function.rules(call, repo))
        except Reply as reply:
            return _misspelled(reply.answer, broken) if broken else reply.answer
        except Exception as exc:
            if attempt < RETRIES and is_conflict(exc):
                log.warning("%s: lock conflict, running it again (%s)", name, exc)
                continue
            log.exception("%s failed", name)
            break
    return {"status": function.default_error}
