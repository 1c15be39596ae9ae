"""The parking service's three implementations on real SQLite, PostgreSQL and MariaDB,
driven over real HTTP (urllib) through `running_service`."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import psutil
import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking import db, schema
from dbstand.workloads.parking.app import PARKING_STACKS, ServiceHandle, running_service
from waiting import wait_until

KINDS = ("sqlite", "postgresql", "mysql")
CASES = [(stack, kind) for stack in PARKING_STACKS for kind in KINDS]


def call(service: ServiceHandle, function: str, method: str = "GET",
         **params: str) -> tuple[int, dict[str, Any]]:
    """One request; (HTTP code, JSON answer)."""
    query = urllib.parse.urlencode(params)
    if method == "GET":
        request = urllib.request.Request(f"{service.base_url}/{function}?{query}")
    else:
        request = urllib.request.Request(f"{service.base_url}/{function}", data=query.encode(),
                                         method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            code, body, ctype = resp.status, resp.read(), resp.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        code, body, ctype = exc.code, exc.read(), exc.headers["Content-Type"]
    assert ctype == "application/json"
    answer = json.loads(body)
    assert "status" in answer and answer["ts"].count(".") == 1
    assert len(answer["ts"].split(".")[1]) == 3
    return code, answer


def ok(service: ServiceHandle, function: str, **params: str) -> dict[str, Any]:
    code, answer = call(service, function, **params)
    assert code == 200, answer
    return answer


def spelled(answer: dict[str, Any]) -> tuple[str, ...]:
    """(status,) or (status, status_code): a status standing alone has no status_code
    key at all (spec "How refusals are spelled")."""
    if "status_code" in answer:
        return (answer["status"], answer["status_code"])
    return (answer["status"],)


def refused(service: ServiceHandle, function: str, **params: str) -> tuple[str, ...]:
    return spelled(ok(service, function, **params))


def descr(**fields: str) -> str:
    return json.dumps(fields)


def uid() -> str:
    return str(uuid.uuid4().int % 2**31)


def tx() -> str:
    return "tx-" + uuid.uuid4().hex


def target_for(kind: str, request: pytest.FixtureRequest, tmp: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp / 'parking.db'}"
    return request.getfixturevalue("pg_url" if kind == "postgresql" else "mariadb_url")


@pytest.fixture(scope="module", params=CASES, ids=[f"{s}-{k}" for s, k in CASES])
def parking_service(request: pytest.FixtureRequest,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceHandle]:
    """One implementation on one database, with its own table prefix; tables dropped
    afterwards."""
    stack, kind = request.param
    target = parse_target_url(target_for(kind, request, tmp_path_factory.mktemp(kind)))
    prefix = f"dbs_{stack.split('-')[1][:4]}_"
    with running_service(stack, target, prefix=prefix) as service:
        yield service
    with closing(db.connect(service.target)) as conn:
        schema.drop_schema(conn, prefix)


def test_prepaid_session_refund_and_balance(parking_service: ServiceHandle) -> None:
    s, user, plate = parking_service, uid(), "P" + uid()
    before = s.totals()["places"]["1333"]
    d = descr(parking_id="1333", registration_plate=plate, duration="120")
    info = ok(s, "get_service_info", version="1", user_id=user, service_descr=d)
    assert info["price"] == "102.00" and info["info"]["duration"] == 120
    assert info["info"]["start_ts"].endswith(".000")
    t = tx()
    assert refused(s, "create_reservation", version="1", user_id=user, service_descr=d,
                   price="101.00", transaction_id=t) == ("wrong_price",)
    assert refused(s, "create_reservation", version="1", service_descr=d,
                   price="102.00", transaction_id=t) == ("not_available", "invalid_user_id")
    assert refused(s, "create_reservation", version="1", user_id=user, price="102.00",
                   transaction_id=t, service_descr=descr(parking_id="1333", duration="120")
                   ) == ("not_available", "invalid_registration_plate")
    assert refused(s, "create_reservation", version="1", user_id=user, service_descr=d,
                   price="x", transaction_id=t) == ("not_available",)
    assert refused(s, "create_reservation", version="1", user_id=user, service_descr=d,
                   price="102.00", transaction_id="abc") == ("bad_transaction",)
    made = ok(s, "create_reservation", version="1", user_id=user, service_descr=d,
              price="102.00", transaction_id=t)
    assert made["status"] == "success" and made["price"] == "102.00"
    replay = ok(s, "create_reservation", version="1", user_id=user, service_descr=d,
                price="102.00", transaction_id=t)
    assert replay == {"status": "success", "ts": replay["ts"]}  # plain success
    assert refused(s, "create_reservation", version="1", user_id=user, service_descr=d,
                   price="51.00", transaction_id=t) == ("bad_transaction",)
    assert ok(s, "pay_reservation", transaction_id=t)["status"] == "success"
    assert ok(s, "pay_reservation", transaction_id=t)["status"] == "success"
    assert ok(s, "check_plate_number", registration_plate=plate)["paid"] == "true"
    assert s.totals()["places"]["1333"] == before - 1
    assert ok(s, "stop_service", transaction_id=t)["delta_amount"] == "89.25"
    assert ok(s, "stop_service", transaction_id=t)["delta_amount"] == "89.25"
    assert ok(s, "get_user_account", user_id=user)["balance"] == "89.25"
    assert ok(s, "check_plate_number", registration_plate=plate)["paid"] == "false"
    # 15 minutes at 51/h paid from the balance: reserved, then spent when paid
    d15 = descr(parking_id="1333", registration_plate=plate, duration="15")
    t2 = tx()
    assert ok(s, "create_reservation", version="1", user_id=user, service_descr=d15,
              price="12.75", pay_from_balance="12.75", transaction_id=t2)["status"] == "success"
    assert s.totals()["reserved"] >= Decimal("12.75")
    assert ok(s, "pay_reservation", transaction_id=t2)["status"] == "success"
    assert ok(s, "get_user_account", user_id=user)["balance"] == "76.50"
    # cancel before paying: the session is over, the payment cannot be paid any more
    t3 = tx()
    assert ok(s, "create_reservation", version="1", user_id=user, service_descr=d15,
              price="12.75", transaction_id=t3)["status"] == "success"
    assert ok(s, "cancel_reservation", transaction_id=t3)["status"] == "success"
    assert ok(s, "cancel_reservation", transaction_id=t3)["status"] == "success"
    assert refused(s, "pay_reservation", transaction_id=t3) == ("bad_transaction",)


def test_ticket_postpaid(parking_service: ServiceHandle) -> None:
    s, user = parking_service, uid()
    issued = ok(s, "issue_ticket", parking_id="15001")
    ticket = issued["user_ticket"]
    assert issued["status"] == "success" and 1_000_000_000 <= int(ticket) <= 1_999_999_999
    d = descr(parking_id="15001", registration_plate="T1", user_ticket=ticket)
    info = ok(s, "get_service_info", version="1", user_id=user, service_descr=d)
    assert info["price"] == "15.00" and info["info"]["paid_duration"] == 0
    assert info["info"]["available_places"] == issued["available_places"]
    assert refused(s, "leave_parking", parking_id="15001",
                   user_ticket=ticket) == ("not_enough_paid",)
    assert refused(s, "get_service_info", version="1", user_id=user,
                   service_descr=descr(parking_id="15001", registration_plate="T1",
                                       user_ticket="42")) == ("not_available",
                                                              "user_ticket_not_found")
    t = tx()
    made = ok(s, "create_reservation", version="1", user_id=user, service_descr=d,
              price="15.00", transaction_id=t)
    assert made["status"] == "success" and made["info"]["paid_duration"] == 0
    assert ok(s, "pay_reservation", transaction_id=t)["status"] == "success"
    assert ok(s, "leave_parking", parking_id="15001", user_ticket=ticket)["status"] == "success"
    assert refused(s, "leave_parking", parking_id="15001",
                   user_ticket=ticket) == ("not_available",)
    assert refused(s, "get_service_info", version="1", user_id=user,
                   service_descr=d) == ("not_available", "user_ticket_out_of_parking")
    assert s.totals()["places"]["15001"] == issued["available_places"] + 1


def test_versions_and_transport_errors(parking_service: ServiceHandle) -> None:
    s = parking_service
    v0 = ok(s, "get_service_info", service_descr=descr(parking_object_id="1333", hours="2"))
    assert v0["price"] == "102.00" and "start_ts" not in v0["info"]
    v2 = ok(s, "get_service_info", version="2", user_id=uid(),
            service_descr=descr(parking_id="15001", duration="1"))
    assert v2["price"] == "15.00" and v2["info"]["balance"] == "0.00"
    na = "not_available"
    for version, fields, reason in (
            ("1", {"parking_id": "1333"}, "invalid_registration_plate"),
            ("1", {"parking_id": "nope", "registration_plate": "P", "duration": "60"},
             "invalid_parking_id"),
            ("1", {"parking_id": "1333", "registration_plate": "P", "duration": "0"},
             "invalid_duration"),
            ("0", {"parking_object_id": "1333", "hours": "abc"}, "invalid_duration"),
            ("0", {"parking_id": "1333", "hours": "2"}, "invalid_parking_id")):
        assert refused(s, "get_service_info", version=version, user_id=uid(),
                       service_descr=descr(**fields)) == (na, reason), (version, fields)
    assert refused(s, "get_service_info", version="2",
                   service_descr=descr(parking_id="1333", duration="60")) == \
        (na, "invalid_user_id")
    assert refused(s, "get_service_info", version="3") == ("bad_protocol",)
    assert refused(s, "pay_reservation", version="x", transaction_id="abcd") == \
        ("bad_protocol",)
    assert refused(s, "pay_reservation", transaction_id="abcd", foo="1") == \
        ("bad_transaction",)
    assert refused(s, "issue_ticket", parking_id="1333", foo="1") == (na,)
    assert refused(s, "check_plate_number", registration_plate="") == (na,)
    code, answer = call(s, "get_service_info", service_descr="{not json")
    assert code == 500 and answer["status"] == "error"
    code, answer = call(s, "no_such_function")
    assert code == 500 and "no_such_function" in answer["error"]
    code, answer = call(s, "get_user_account", method="POST", user_id=uid())
    assert code == 200 and answer["balance"] == "0.00"


def test_account_transfer_status_codes(parking_service: ServiceHandle) -> None:
    s, a, b, t = parking_service, uid(), uid(), tx()
    same = ok(s, "account_transfer", transaction_id=t, src_user_id=a, dst_user_id=a)
    assert (same["status"], same["status_code"]) == ("bad_transaction", "same_src_and_dst")
    empty = ok(s, "account_transfer", transaction_id=t, src_user_id=a, dst_user_id=b)
    assert (empty["status"], empty["status_code"]) == ("success", "nothing_to_transfer")
    assert refused(s, "account_transfer", transaction_id=t, src_user_id=a) == \
        ("bad_transaction",)
    assert ok(s, "get_user_account", user_id=a)["balance"] == "0.00"


@pytest.fixture
def sqlite_target(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'p.db'}"


@pytest.mark.parametrize("stack", PARKING_STACKS)
def test_logging_writes_requests_and_statements(stack: str, sqlite_target: str) -> None:
    user = "u" + uid()
    with running_service(stack, parse_target_url(sqlite_target), logging=True) as s:
        ok(s, "get_user_account", user_id=user)
        size, lines = s.log_size()
        assert s.log_path is not None and size > 0 and lines >= 3
        text = s.log_path.read_text()
    assert "get_user_account" in text and "SELECT" in text.upper() and user in text
    with running_service(stack, parse_target_url(sqlite_target), logging=False) as s:
        ok(s, "get_user_account", user_id=user)
        assert s.log_path is None and s.log_size() == (0, 0)


def test_broken_switches_change_behaviour(sqlite_target: str) -> None:
    target = parse_target_url(sqlite_target)
    d = descr(parking_id="1333", registration_plate="B1", duration="60")
    with running_service("python-raw", target, broken="skip-price-check") as s:
        assert ok(s, "create_reservation", version="1", user_id="1", service_descr=d,
                  price="1.00", transaction_id=tx())["status"] == "success"
    with running_service("python-raw", target, broken="no-idempotent-replay") as s:
        t = tx()
        for expected in ("success", "bad_transaction"):
            assert ok(s, "create_reservation", version="1", user_id="1", service_descr=d,
                      price="51.00", transaction_id=t)["status"] == expected


def test_refusals(sqlite_target: str) -> None:
    import socket
    import sqlite3

    from dbstand.errors import OwnershipError, ServerError, UserError

    target = parse_target_url(sqlite_target)
    refused = [("unknown broken switch", "python-raw", target, {"broken": "skip-everything"}),
               ("unknown parking stack", "python-nope", target, {}),
               ("SQLite file", "python-raw", parse_target_url("sqlite://"), {})]
    for message, stack, where, options in refused:
        with pytest.raises(UserError, match=message), running_service(stack, where, **options):
            pass
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ServerError, match="in use"), \
                running_service("python-raw", target, port=port):
            pass
    # a table dbstand did not create is never touched
    with closing(sqlite3.connect(target.database or "")) as conn:
        conn.execute("CREATE TABLE theirs_t_product (x INTEGER)")
        conn.commit()
    with pytest.raises(OwnershipError), running_service("python-raw", target, prefix="theirs_"):
        pass


def test_stops_every_process_and_reseeds(sqlite_target: str) -> None:
    target = parse_target_url(sqlite_target)
    with running_service("python-sqlalchemy", target, threads=2) as s:
        tree = [s.pid] + [p.pid for p in psutil.Process(s.pid).children(recursive=True)]
        assert len(tree) >= 2  # gunicorn's master and its worker
        ok(s, "issue_ticket", parking_id="1333")
        assert s.totals()["places"]["1333"] == 7999
        s.reseed()
        assert s.totals()["places"]["1333"] == 8000
    wait_until(lambda: not [pid for pid in tree if psutil.pid_exists(pid)
                            and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE],
               10, "the service's processes to exit")


def test_stops_on_error_inside(sqlite_target: str) -> None:
    pids: list[int] = []
    with pytest.raises(KeyboardInterrupt), \
            running_service("python-peewee", parse_target_url(sqlite_target)) as s:
        pids.append(s.pid)
        raise KeyboardInterrupt
    assert not psutil.pid_exists(pids[0])


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_concurrent_sessions_lose_nothing(kind: str, request: pytest.FixtureRequest,
                                          tmp_path: Path) -> None:
    """4 server threads, 4 clients creating and paying sessions on one park at once:
    every call succeeds (lock conflicts are run again) and no place is lost."""
    from concurrent.futures import ThreadPoolExecutor

    target = parse_target_url(target_for(kind, request, tmp_path))
    with running_service("python-raw", target, threads=4, prefix="dbs_conc_") as s:
        s.reseed()
        before = s.totals()

        def client(n: int) -> list[str]:
            statuses = []
            for _ in range(6):
                user, t = uid(), tx()
                d = descr(parking_id="1333", registration_plate=f"C{n}", duration="60")
                statuses.append(ok(s, "create_reservation", version="1", user_id=user,
                                   service_descr=d, price="51.00", transaction_id=t)["status"])
                statuses.append(ok(s, "pay_reservation", transaction_id=t)["status"])
                statuses.append(ok(s, "stop_service", transaction_id=t)["status"])
            return statuses

        with ThreadPoolExecutor(4) as pool:
            statuses = [st for chunk in pool.map(client, range(4)) for st in chunk]
        after = s.totals()
    assert set(statuses) == {"success"}
    assert after["places"]["1333"] == before["places"]["1333"] - 24
    assert after["payments"] - before["payments"] == 24
    assert after["balance"] - before["balance"] == 24 * Decimal("38.25")
    with closing(db.connect(s.target)) as conn:
        schema.drop_schema(conn, "dbs_conc_")
