"""What answers on a port: tells a wrong port from a wrong server in one line.

Tarantool and MySQL/MariaDB speak first (a greeting); PostgreSQL waits for the
client. Reading the first bytes with a short timeout names what is there instead of
letting a driver hang on a protocol it does not understand.
"""

from __future__ import annotations

import socket


def first_bytes(host: str, port: int, timeout_s: float = 3.0) -> bytes | None:
    """The first bytes the server sends, b"" if it closes at once, None if it stays
    silent for `timeout_s`. Connection errors (OSError) propagate."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        try:
            return sock.recv(256)
        except TimeoutError:
            return None


def is_tarantool(data: bytes | None) -> bool:
    return data is not None and data.startswith(b"Tarantool")


def is_mysql(data: bytes | None) -> bool:
    """A MySQL protocol packet: a v10 handshake, or an error packet (host blocked...)."""
    return data is not None and len(data) > 4 and data[4] in (0x0A, 0xFF)


def what_answers(data: bytes | None) -> str:
    """A few words naming the server from its greeting."""
    if data is None:
        return "a server that waits for the client to speak first (PostgreSQL?)"
    if not data:
        return "a server that closes the connection at once"
    if is_tarantool(data):
        line = data.split(b"\n", 1)[0].decode(errors="replace")
        return " ".join(line.split()[:3])  # "Tarantool 2.6.0 (Binary)", not the uuid
    if is_mysql(data):
        return "a MySQL/MariaDB server"
    return "a server speaking an unknown protocol"
