"""Before a MySQL driver connects: is a MySQL server greeting on the port?

A port that accepts but never speaks (another server's port, a stalled listener)
would hang a driver whose timeout covers only the TCP connect; reading the greeting
first, with a time limit, turns that into one clear line.
"""

from __future__ import annotations

from dbstand.drivers import connect_timeout_s
from dbstand.drivers.endpoint import Endpoint
from dbstand.errors import TargetError
from dbstand.targets.greeting import first_bytes, is_mysql, what_answers
from dbstand.targets.url import TargetURL


def check_greeting(target: TargetURL, e: Endpoint) -> None:
    if e.host.startswith("/"):
        return
    try:
        data = first_bytes(e.host, e.port, connect_timeout_s())
    except OSError:
        return  # refused or unreachable: the driver says so itself
    if data is None:
        raise TargetError(f"cannot connect to {target.redacted()}: the server on "
                          f"{e.host}:{e.port} accepted the connection but sent no MySQL "
                          f"greeting within {connect_timeout_s()} s (stalled, or not MySQL)")
    if not is_mysql(data):
        raise TargetError(f"cannot connect to {target.redacted()}: {what_answers(data)} "
                          f"answers on {e.host}:{e.port}, not MySQL/MariaDB")
