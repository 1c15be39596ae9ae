"""Connection arguments of a mysql:// URL for code that connects by itself (an ORM's
pool in the parking service), with dbstand's greeting check and time limits."""

from __future__ import annotations

from typing import Any

from dbstand.drivers import read_timeout_s
from dbstand.drivers.endpoint import endpoint
from dbstand.drivers.mysql_greeting import check_greeting


def connect_args(target: Any) -> dict[str, Any]:
    """Host, port, user, password and database of a mysql:// URL, as most MySQL drivers
    name them (drivers/endpoint.py; a database is required: dbstand creates its tables
    there, never in a default one), plus PyMySQL's read and write time limits.

    The server's greeting is read first (drivers/mysql_greeting.py): code that builds
    its own connections from these arguments (an ORM's pool in the parking service)
    learns at once, in one line, that the port accepts but never speaks, instead of
    hanging on its first request.
    """
    e = endpoint(target, database_required=True)
    check_greeting(target, e)
    return {"host": e.host, "port": e.port, "user": e.user, "password": e.password,
            "database": e.database, "read_timeout": read_timeout_s(),
            "write_timeout": read_timeout_s()}
