"""An independent client of a parking service, shaped like the study's own test
program (seed 000: one Python `unittest` program run as
`python <program> -u http://host:port/`, five test cases, "green" on every
implementation). Written here from the facts in shared/specs/parking.md only: it
imports nothing from dbstand and uses the standard library alone, so it judges a
stack the way an outside client would.

Usage: python study_client.py -u URL [-v]
Exit 0 when all five tests pass (unittest's own summary on stderr).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

BASE_URL = ""

SUCCESS, NA, BT = "success", "not_available", "bad_transaction"
PARK_PREPAID, PARK_TICKET = "1333", "15001"   # 51/h and 60/h in the seed rows


#: what makes this process's identities its own: its start (ms) and pid, fixed width
#: (a later process with the same pid started later), then a counter. Random ids of
#: 2**31, as the study's client drew them, meet ids that earlier runs left in the same
#: tables (a user with an old balance is not fresh) with odds that grow as runs add up.
_STAMP, _PID = time.time_ns() // 1_000_000, os.getpid()
_COUNTER = itertools.count()


def serial() -> tuple[int, int, int]:
    """(start ms, pid, n): a triple no other call of any client on this machine gets."""
    return _STAMP, _PID, next(_COUNTER)


def _b36(n: int, width: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    while n:
        n, d = divmod(n, 36)
        out = digits[d] + out
    return out.rjust(width, "0")


class ParkingTestCase(unittest.TestCase):
    """Calls the service over HTTP GET and checks status, then status_code."""

    def call(self, function: str, expect: str, code: str | None = None,
             **params: Any) -> dict[str, Any]:
        query = {k: (json.dumps(v) if isinstance(v, dict) else str(v))
                 for k, v in params.items()}
        url = f"{BASE_URL.rstrip('/')}/{function}?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(url, timeout=30) as answer:
            self.assertEqual(answer.status, 200, url)
            self.assertIn("application/json", answer.headers.get("Content-Type", ""))
            body = json.loads(answer.read())
        self.assertEqual(body.get("status"), expect, f"{function} {params}: {body}")
        self.assertEqual(body.get("status_code"), code, f"{function} {params}: {body}")
        ts = body.get("ts")
        self.assertIsInstance(ts, str, body)
        self.assertRegex(ts, r"^[0-9]+\.[0-9]{3}$")
        return body

    # each identity: a random head (spread over the index as random ids are), then the
    # serial, which alone makes it unique; within the spec's sizes (user_eid str:64,
    # plate_number str:32, transaction ids 4..64 characters)

    @staticmethod
    def user() -> str:
        """Decimal digits: 9 random, 13 of start, 7 of pid (pid_max <= 2**22), counter."""
        stamp, pid, n = serial()
        return f"{random.randrange(10**9):09d}{stamp:013d}{pid:07d}{n}"

    @staticmethod
    def plate() -> str:
        """T, 4 random plate characters, then the serial in base 36 (at most ~25)."""
        stamp, pid, n = serial()
        head = "".join(random.choice("0123456789ABCEHKMOPTX") for _ in range(4))
        return f"T{head}{_b36(stamp, 9)}{_b36(pid, 5)}{_b36(n, 1)}"

    @staticmethod
    def trans() -> str:
        """study-, 12 random hex digits, then the serial in hex."""
        stamp, pid, n = serial()
        return f"study-{random.getrandbits(48):012x}{stamp:011x}{pid:06x}{n:x}"

    def balance(self, user: str) -> str:
        return str(self.call("get_user_account", SUCCESS, user_id=user)["balance"])


class TestPrepaid(ParkingTestCase):
    def test_prepaid_session(self) -> None:
        user, plate, tx = self.user(), self.plate(), self.trans()
        d = {"parking_id": PARK_PREPAID, "registration_plate": plate, "duration": "120"}
        quote = self.call("get_service_info", SUCCESS, version=1, user_id=user,
                          service_descr=d)
        self.assertEqual(quote["price"], "102.00")        # 120 min at 51/h
        self.assertEqual(quote["info"]["duration"], 120)
        self.assertTrue(quote["info"]["start_ts"].endswith(".000"))
        places = quote["info"]["available_places"]
        self.call("get_service_info", NA, "invalid_user_id", version=1, service_descr=d)
        self.call("get_service_info", NA, "invalid_registration_plate", version=1,
                  user_id=user, service_descr={"parking_id": PARK_PREPAID, "duration": "120"})
        self.call("get_service_info", NA, "invalid_parking_id", version=1, user_id=user,
                  service_descr={**d, "parking_id": "nowhere"})
        self.call("get_service_info", NA, "invalid_duration", version=1, user_id=user,
                  service_descr={**d, "duration": "0"})
        reserve = {"version": 1, "user_id": user, "service_descr": d, "transaction_id": tx}
        self.call("create_reservation", "wrong_price", **{**reserve, "price": "90.00"})
        self.call("create_reservation", BT, **{**reserve, "price": "102.00",
                                               "transaction_id": "abc"})
        self.call("create_reservation", SUCCESS, **reserve, price="102.00")
        self.call("create_reservation", SUCCESS, **reserve, price="102.00")  # replay
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        after = self.call("get_service_info", SUCCESS, version=1, user_id=user,
                          service_descr=d)
        self.assertEqual(after["info"]["available_places"], places - 1)
        self.assertEqual(self.call("check_plate_number", SUCCESS,
                                   registration_plate=plate)["paid"], "true")
        # pay, cancel, pay again: the second payment of a paid reservation succeeds
        # without a change even after the cancel
        self.call("cancel_reservation", SUCCESS, transaction_id=tx)
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        self.assertEqual(self.call("check_plate_number", SUCCESS,
                                   registration_plate=plate)["paid"], "false")
        # cancelled before it was ever paid: no payment any more
        unpaid = self.trans()
        self.call("create_reservation", SUCCESS, **{**reserve, "transaction_id": unpaid},
                  price="102.00")
        self.call("cancel_reservation", SUCCESS, transaction_id=unpaid)
        self.call("pay_reservation", BT, transaction_id=unpaid)
        self.call("pay_reservation", BT, transaction_id=self.trans())
        self.call("cancel_reservation", BT, transaction_id=self.trans())


class TestPostpaid(ParkingTestCase):
    def test_ticket_session(self) -> None:
        issued = self.call("issue_ticket", SUCCESS, parking_id=PARK_TICKET)
        ticket = issued["user_ticket"]
        self.assertIsInstance(ticket, str)
        self.assertTrue(1_000_000_000 <= int(ticket) <= 1_999_999_999)
        self.assertIsInstance(issued["available_places"], int)
        d = {"parking_object_id": PARK_TICKET, "user_ticket": ticket}
        self.assertEqual(self.call("get_service_info", SUCCESS, service_descr=d)["price"],
                         "15.00")                         # first quarter hour at 60/h
        self.call("get_service_info", NA, "user_ticket_not_found",
                  service_descr={**d, "user_ticket": "42"})
        self.call("leave_parking", "not_enough_paid", parking_id=PARK_TICKET,
                  user_ticket=ticket)
        tx = self.trans()
        self.call("create_reservation", SUCCESS, service_descr=d, price="15.00",
                  transaction_id=tx)
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        self.call("stop_service", BT, transaction_id=tx)  # no refund of a ticket
        self.call("leave_parking", SUCCESS, parking_id=PARK_TICKET, user_ticket=ticket)
        self.call("get_service_info", NA, "user_ticket_out_of_parking", service_descr=d)


class TestRefunds(ParkingTestCase):
    def test_refund_and_paying_from_the_balance(self) -> None:
        user = self.user()
        self.assertEqual(self.balance(user), "0.00")
        tx = self.trans()
        d = {"parking_id": PARK_PREPAID, "registration_plate": self.plate(),
             "duration": "120"}
        self.call("create_reservation", SUCCESS, version=1, user_id=user, service_descr=d,
                  price="102.00", transaction_id=tx)
        self.call("stop_service", BT, transaction_id=tx)  # not paid yet
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        # stopped at once: 105 of the 120 minutes come back
        self.assertEqual(self.call("stop_service", SUCCESS,
                                   transaction_id=tx)["delta_amount"], "89.25")
        self.assertEqual(self.call("stop_service", SUCCESS,
                                   transaction_id=tx)["delta_amount"], "89.25")
        self.assertEqual(self.balance(user), "89.25")
        tx2 = self.trans()
        self.call("create_reservation", SUCCESS, version=1, user_id=user,
                  service_descr={**d, "registration_plate": self.plate(), "duration": "60"},
                  price="51.00", pay_from_balance="51.00", transaction_id=tx2)
        self.call("pay_reservation", SUCCESS, transaction_id=tx2)
        self.assertEqual(self.balance(user), "38.25")


class TestTransfers(ParkingTestCase):
    def test_every_transfer_answer(self) -> None:
        src, dst, other = self.user(), self.user(), self.user()
        tx = self.trans()
        d = {"parking_id": PARK_PREPAID, "registration_plate": self.plate(),
             "duration": "120"}
        self.call("create_reservation", SUCCESS, version=1, user_id=src, service_descr=d,
                  price="102.00", transaction_id=tx)
        self.call("pay_reservation", SUCCESS, transaction_id=tx)
        self.call("stop_service", SUCCESS, transaction_id=tx)
        self.call("account_transfer", BT, "same_src_and_dst", transaction_id=self.trans(),
                  src_user_id=src, dst_user_id=src)
        self.call("account_transfer", SUCCESS, "nothing_to_transfer",
                  transaction_id=self.trans(), src_user_id=other, dst_user_id=dst)
        held = self.trans()
        self.call("create_reservation", SUCCESS, version=1, user_id=src,
                  service_descr={**d, "registration_plate": self.plate(), "duration": "60"},
                  price="51.00", pay_from_balance="51.00", transaction_id=held)
        self.call("account_transfer", NA, "reserved_funds_present",
                  transaction_id=self.trans(), src_user_id=src, dst_user_id=dst)
        self.call("cancel_reservation", SUCCESS, transaction_id=held)
        self.call("cancel_reservation", SUCCESS, transaction_id=held)
        done = self.trans()
        self.call("account_transfer", SUCCESS, transaction_id=done, src_user_id=src,
                  dst_user_id=dst)
        self.call("account_transfer", SUCCESS, "already_done", transaction_id=done,
                  src_user_id=src, dst_user_id=dst)
        self.call("account_transfer", BT, "another_trans_exists", transaction_id=done,
                  src_user_id=src, dst_user_id=other)
        self.assertEqual(self.balance(src), "0.00")
        self.assertEqual(self.balance(dst), "89.25")


class TestVersions(ParkingTestCase):
    def test_protocol_versions(self) -> None:
        user, plate = self.user(), self.plate()
        v0 = self.call("get_service_info", SUCCESS, version=0, service_descr={
            "parking_object_id": PARK_PREPAID, "plate_number": plate, "hours": "2"})
        self.assertEqual(v0["price"], "102.00")
        self.assertNotIn("start_ts", v0["info"])
        v1 = self.call("get_service_info", SUCCESS, version=1, user_id=user, service_descr={
            "parking_id": PARK_PREPAID, "registration_plate": plate, "duration": "45"})
        self.assertEqual(v1["price"], "38.25")
        v2 = self.call("get_service_info", SUCCESS, version=2, user_id=user, service_descr={
            "parking_id": PARK_TICKET, "duration": "61"})
        self.assertEqual((v2["price"], v2["info"]["duration"], v2["info"]["balance"]),
                         ("75.00", 75, "0.00"))
        for version in ("3", "-1", "x"):
            self.call("get_user_account", "bad_protocol", version=version, user_id=user)
        self.call("check_plate_number", NA, registration_plate="")
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(f"{BASE_URL.rstrip('/')}/no_such_function", timeout=30)
        self.assertEqual(caught.exception.code, 500)


def main() -> int:
    global BASE_URL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-u", "--url", required=True, help="the service's base URL")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    BASE_URL = args.url
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2 if args.verbose else 1).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
