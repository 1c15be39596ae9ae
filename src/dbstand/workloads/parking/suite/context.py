"""The state one scenario works with: client, random ids, and the checked call.

`exclusive` says whether this client is alone on the service: only then can the
suite check `available_places` arithmetic exactly (concurrent users move it too).
"""

from __future__ import annotations

import json
import random
import string
import uuid
from dataclasses import dataclass, field
from typing import Any

from dbstand.workloads.parking.suite.checks import Checker, SuiteFailure, check_envelope
from dbstand.workloads.parking.suite.client import ParkingClient

#: answers whose code the spec leaves free unless a call names one
SUCCESS = "success"


@dataclass
class Ctx:
    client: ParkingClient
    rng: random.Random
    exclusive: bool = True
    scenario: str = ""
    calls: list[str] = field(default_factory=list)   # function of every call, in order

    # --- fresh identities --------------------------------------------------------
    def user(self) -> str:
        return str(self.rng.randrange(2**31))

    def plate(self) -> str:
        letters = "ABCEHKMOPTXY"
        pick = self.rng.choice
        return (pick(letters) + "".join(pick(string.digits) for _ in range(3)) +
                pick(letters) + pick(letters) + str(self.rng.randrange(10, 1000)))

    def txid(self) -> str:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4).hex

    # --- the checked call --------------------------------------------------------
    def call(self, label: str, function: str, params: dict[str, Any], status: str,
             code: str | None = None, *, reason: str | None = None,
             reason_optional: bool = False) -> Checker:
        """Call `function`, check the envelope, `status` and `status_code`.

        `code` given: status_code must equal it. Not given on a success: the answer
        must carry no status_code (the spec's "plain success"). Not given on an
        error: any detail is allowed.

        `reason` (validation refusals such as invalid_user_id): the spec names them
        without saying whether they are the status or the status_code under the
        function's default error `status`; the original service answered
        `not_available` + status_code, a reading of the spec gives them as the status.
        Both are accepted, nothing else; `reason_optional` also accepts the bare
        default status (the original's version 0 answered so).
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
                               f"{type(exc).__name__}: {exc}") from None
        body = check_envelope(self.scenario, name, answer.http_status, answer.content_type,
                              answer.body)
        check = Checker(self.scenario, name, body)
        if reason is not None:
            self._reason(check, status, reason, reason_optional)
            return check
        check.equal("status", status)
        if code is not None:
            check.equal("status_code", code)
        elif status == SUCCESS and body.get("status_code") not in (None, ""):
            check.fail("a plain success (no status_code)",
                       f"status_code={body['status_code']!r}")
        return check

    def _reason(self, check: Checker, status: str, reason: str, optional: bool) -> None:
        got, detail = check.body.get("status"), check.body.get("status_code")
        if got == reason or (got == status and (detail == reason or
                                                (optional and detail in (None, "")))):
            return
        wanted = f"status {reason!r} or {status!r} with status_code {reason!r}"
        check.fail(wanted + (f" (or bare {status!r})" if optional else ""),
                   f"status={got!r} status_code={detail!r}")

    def places(self, check: Checker, path: str, expected: int | None) -> int:
        """available_places: an integer; equal to `expected` when alone on the service."""
        got = check.integer(path)
        if self.exclusive and expected is not None and got != expected:
            check.fail(f"{path}={expected}", f"{path}={got}")
        return got

    def fail(self, call: str, expected: Any, got: Any) -> None:
        raise SuiteFailure(self.scenario, call, expected, got)
