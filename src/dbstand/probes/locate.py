"""Find the process of the database server a target URL points at.

A managed server (`dbstand server up`) is known by its record. Otherwise, for a
target on this machine, the process listening on the URL's port is looked up
(psutil): visible for servers of the same user, or any server when run as root.
"""

from __future__ import annotations

import socket

import psutil

from dbstand.probes import sockdiag
from dbstand.targets.kinds import get_kind
from dbstand.targets.managed import record_for
from dbstand.targets.url import TargetURL

LOOPBACK = {"localhost", "127.0.0.1", "::1", "ip6-localhost"}


def _local_addresses() -> set[str]:
    addresses = set(LOOPBACK)
    for entries in psutil.net_if_addrs().values():
        addresses.update(e.address.split("%")[0] for e in entries)
    return addresses


def is_local(host: str | None) -> bool:
    if host is None or host in LOOPBACK or host.startswith("/"):
        return True
    local = _local_addresses()
    if host in local:
        return True
    try:
        return any(info[4][0] in local for info in socket.getaddrinfo(host, None))
    except OSError:
        return False


def server_pid(target: TargetURL) -> tuple[int | None, str]:
    """(pid, how it was found) of the server behind `target`, or (None, why not)."""
    target = target.direct()  # a routed target's host and port are its proxy's
    kind = get_kind(target.kind)
    if kind.embedded:
        return None, f"embedded: {kind.title} runs inside the client process"
    record = record_for(target)
    if record is not None:
        return record.pid, "managed server record"
    if not is_local(target.host):
        return None, f"server on another host ({target.host})"
    port = target.port or kind.default_port
    if port is None:
        return None, "the target names no port and its kind has none by default"
    try:
        inodes = sockdiag.listening_inodes(port)
    except OSError:  # no sock_diag here: every socket through psutil
        return _listener_through_psutil(port)
    if not inodes:
        return None, f"no process listens on port {port} here"
    pid = sockdiag.socket_owner(inodes)
    if pid is not None:
        return pid, f"process listening on port {port}"
    return None, f"the process listening on port {port} belongs to another user"


def _listener_through_psutil(port: int) -> tuple[int | None, str]:
    try:
        connections = psutil.net_connections(kind="inet")
    except psutil.Error as exc:
        return None, f"cannot list sockets: {type(exc).__name__}"
    for conn in connections:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
            if conn.pid:
                return conn.pid, f"process listening on port {port}"
            return None, f"the process listening on port {port} belongs to another user"
    return None, f"no process listens on port {port} here"
