"""The state one scenario works with: client, fresh ids (ids.py), and the checked call.

`exclusive` says whether this client is alone on the service: only then can the
suite check `available_places` arithmetic exactly (concurrent users move it too).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from dbstand.workloads.parking.suite import ids
from dbstand.workloads.parking.suite.checks import Checker, SuiteFailure, check_envelope
from dbstand.workloads.parking.suite.client import ParkingClient, call_failure

SUCCESS = "success"
#: refusals: validation reasons go in status_code under this status
NOT_AVAILABLE = "not_available"
BAD_TRANSACTION = "bad_transaction"
_NONE = object()


def _spelled(status: Any, code: Any) -> str:
    """A status and status_code (`_NONE`: absent) as a failure message shows them."""
    if code is _NONE:
        return f"status={status!r} and no status_code"
    return f"status={status!r} status_code={code!r}"


@dataclass
class Ctx:
    client: ParkingClient
    rng: random.Random
    exclusive: bool = True
    scenario: str = ""
    calls: list[str] = field(default_factory=list)   # function of every call, in order

    # --- fresh identities: unique by construction over the whole run (ids.py) ---
    def user(self) -> str:
        return ids.user_id(self.rng)

    def plate(self) -> str:
        return ids.plate(self.rng)

    def txid(self) -> str:
        return ids.txid(self.rng)

    # --- the checked call --------------------------------------------------------
    def call(self, label: str, function: str, params: dict[str, Any], status: str,
             code: str | None = None) -> Checker:
        """Call `function`, check the envelope, then `status` and `status_code`.

        The spec's wire format ("How refusals are spelled"): `status` is one of a short
        list and a reason goes in `status_code`, as the study's own client checks them,
        status first. `code` given: status_code must equal it (e.g. `not_available` /
        `invalid_user_id`). Not given: the status stands alone and the answer must
        carry no status_code at all (plain success, bad_protocol, wrong_price, ...).
        """
        query: dict[str, str] = {}
        for key, value in params.items():
            if value is None:
                continue
            query[key] = json.dumps(value) if isinstance(value, dict) else str(value)
        name = f"{function} ({label})"
        self.calls.append(function)
        try:
            answer = self.client.get(function, query)
        except Exception as exc:  # socket error, timeout: the service failed this call
            raise SuiteFailure(self.scenario, name, "an HTTP answer",
                               call_failure(exc)) from None
        body = check_envelope(self.scenario, name, answer.http_status, answer.content_type,
                              answer.body)
        check = Checker(self.scenario, name, body)
        got, detail = body.get("status"), body.get("status_code", _NONE)
        if got != status or (code is None and detail is not _NONE) or \
                (code is not None and detail != code):
            check.fail(_spelled(status, _NONE if code is None else code),
                       _spelled(got, detail))
        return check

    def places(self, check: Checker, path: str, expected: int | None) -> int:
        """available_places: an integer; equal to `expected` when alone on the service."""
        got = check.integer(path)
        if self.exclusive and expected is not None and got != expected:
            check.fail(f"{path}={expected}", f"{path}={got}")
        return got

    def fail(self, call: str, expected: Any, got: Any) -> None:
        raise SuiteFailure(self.scenario, call, expected, got)
