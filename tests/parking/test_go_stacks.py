"""The Go parking stacks (stacks/go/go-parking-sql, go-parking-gorm) pass the
conformance suite on real PostgreSQL and MariaDB, run through their manifests by
`dbstand stack check` (built once, then cached by the launcher)."""

from __future__ import annotations

from contextlib import closing

import pytest

from dbstand.targets.url import parse_target_url
from dbstand.workloads.parking import db, schema

GO_STACKS = ("go-parking-sql", "go-parking-gorm")
PREFIX = "dbs_gopark_"



@pytest.mark.timeout(900)  # a first build of a Go stack takes minutes
@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
@pytest.mark.parametrize("stack", GO_STACKS)
def test_go_stack_conforms(stack: str, kind: str, cli, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("pg_url" if kind == "postgresql" else "mariadb_url")
    try:
        result = cli("stack", "check", stack, "--target", url, "--prefix", PREFIX)
        assert result.code == 0, result.stdout + result.stderr
        for scenario in ("prepaid", "postpaid", "refunds", "transfers", "versions"):
            assert scenario in result.stdout
        assert "FAIL" not in result.stdout
    finally:
        with closing(db.connect(parse_target_url(url))) as conn:
            schema.drop_schema(conn, PREFIX)
