"""A call that gets no HTTP answer is reported as what happened to it, in plain words.

Real TCP on 127.0.0.1: a closed port, a server that hangs up mid-answer, one that
never answers (conftest's `silent_port`). test_app_faults.py relies on these words
when it kills the service mid-run.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest

from dbstand.workloads.parking.suite import ParkingClient
from dbstand.workloads.parking.suite.client import call_failure


@contextmanager
def _hanging_up(reply: bytes) -> Iterator[int]:
    """A one-connection server: reads the request, sends `reply`, hangs up."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        thread.join(10)
        listener.close()


def _failure(port: int, timeout_s: float = 5.0) -> str:
    client = ParkingClient(f"http://127.0.0.1:{port}", timeout_s)
    try:
        with pytest.raises(Exception) as caught:
            client.get("get_service_info", {"user_id": "1"})
    finally:
        client.close()
    return call_failure(caught.value)


def _closed_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("reply", [
    b"",                                                             # hangs up at once
    b"HTTP/1.1 200 OK\r\nContent-Length: 53\r\n\r\n",                # body never comes
    b"HTTP/1.1 200 OK\r\nContent-Length: 53\r\n\r\n{\"status\":",    # body cut short
])
def test_a_hang_up_mid_answer_is_a_lost_connection(reply: bytes) -> None:
    with _hanging_up(reply) as port:
        words = _failure(port)
    assert words.startswith("the connection was lost before the answer ended ("), words


def test_a_closed_port_is_could_not_connect() -> None:
    words = _failure(_closed_port())
    assert words.startswith("could not connect: refused or unreachable ("), words


def test_a_silent_server_is_no_answer_in_time(silent_port: int) -> None:
    words = _failure(silent_port, timeout_s=0.3)
    assert words.startswith("no answer in time ("), words
