"""Several users running whole passes at once: the totals afterwards are exactly what
the passes imply (places, rows, balances), so no update was lost."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking.app import running_service
from dbstand.workloads.parking.suite import ParkingClient, SuiteFailure, run_pass, totals_mismatch

USERS, PASSES = 4, 3


@pytest.mark.parametrize("where", ["postgresql", "mariadb", "sqlite"])
def test_concurrent_users_lose_no_update(where: str, request: pytest.FixtureRequest,
                                         tmp_path: Path) -> None:
    url = (f"sqlite:///{tmp_path / 'parking.db'}" if where == "sqlite" else
           request.getfixturevalue("pg_url" if where == "postgresql" else "mariadb_url"))
    stack = {"postgresql": "python-sqlalchemy", "mariadb": "python-peewee",
             "sqlite": "python-raw"}[where]
    with running_service(stack, parse_target_url(url), threads=USERS) as service:
        service.reseed()
        before = service.totals()
        errors: list[BaseException] = []
        done = [0] * USERS

        def user(i: int) -> None:
            client = ParkingClient(service.base_url)
            try:
                for _ in range(PASSES):
                    run_pass(client, exclusive=False)
                    done[i] += 1
            except (SuiteFailure, OSError) as exc:
                errors.append(exc)
            finally:
                client.close()

        threads = [threading.Thread(target=user, args=(i,)) for i in range(USERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        after = service.totals()
    assert not errors, [str(e) for e in errors]
    assert sum(done) == USERS * PASSES
    assert totals_mismatch(before, after, USERS * PASSES) == {}
    assert after["places"]["1333"] == before["places"]["1333"] - 4 * USERS * PASSES
    assert after["balance"] == after["receipt_amount"] - after["consumed_amount"] - \
        before["receipt_amount"] + before["consumed_amount"] + before["balance"]
