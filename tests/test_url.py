"""Target URL parsing and password redaction."""

from __future__ import annotations

import pytest

from dbstand.console import redact_text
from dbstand.errors import TargetError
from dbstand.targets.url import parse_target_url


def test_postgres_url_parts_and_redaction() -> None:
    url = parse_target_url("postgresql://bob:s3cr%40t@db.local:6543/app?sslmode=disable")
    assert (url.kind, url.host, url.port, url.user, url.database) == \
        ("postgresql", "db.local", 6543, "bob", "app")
    assert url.password == "s3cr@t"
    assert url.option("sslmode") == "disable"
    assert "s3cr" not in url.redacted() and "***" in url.redacted()
    assert "s3cr" not in str(url) and "s3cr" not in repr(url)
    assert parse_target_url(url.secret()).password == "s3cr@t"


@pytest.mark.parametrize("text,kind,db", [
    ("sqlite://", "sqlite", None),
    ("sqlite:///rel.db", "sqlite", "rel.db"),
    ("sqlite:////abs/x.db", "sqlite", "/abs/x.db"),
    ("mariadb://root@127.0.0.1/test", "mysql", "test"),
    ("postgres://u@h/d", "postgresql", "d"),
])
def test_schemes(text: str, kind: str, db: str | None) -> None:
    url = parse_target_url(text)
    assert url.kind == kind and url.database == db


@pytest.mark.parametrize("text", ["nonsense", "oracle://x/y", "postgresql://:5432/db",
                                  "postgresql://h:notaport/db", "sqlite:relative"])
def test_malformed(text: str) -> None:
    with pytest.raises(TargetError):
        parse_target_url(text)


def test_malformed_url_error_hides_password() -> None:
    with pytest.raises(TargetError) as info:
        parse_target_url("postgresql://u:hunter2@h:port/db")
    assert "hunter2" not in str(info.value)


def test_redact_free_text() -> None:
    text = "run --target postgresql://u:hunter2@h/db --stack x"
    assert "hunter2" not in redact_text(text)
