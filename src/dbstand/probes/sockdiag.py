"""Which process listens on a TCP port, through the kernel's socket diagnostics.

A case looks its database server up once (probes/locate.py). psutil.net_connections
decodes every socket of the machine for that, and after a load has left thousands of
sockets in TIME_WAIT it takes a tenth of a second and more; a sock_diag dump asks the
kernel for the listening sockets alone (the `ss -ltn` netlink request), then the
process is the one whose file descriptors hold such a socket.
"""

from __future__ import annotations

import os
import socket
import struct

NETLINK_SOCK_DIAG = 4          # linux/netlink.h
SOCK_DIAG_BY_FAMILY = 20       # linux/sock_diag.h
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_LISTEN = 10                # include/net/tcp_states.h
_HEADER = struct.Struct("=IHHII")          # nlmsghdr: len, type, flags, seq, pid
_REQUEST = struct.Struct("=BBBxI48x")      # inet_diag_req_v2, any socket id
_INODE_AT = 4 + 48 + 16                    # inet_diag_msg: 4 bytes, sockid, 4 u32s


def listening_inodes(port: int) -> set[int]:
    """The inodes of the TCP sockets (IPv4 and IPv6) listening on `port`; OSError if
    the kernel has no sock_diag (not Linux, or netlink closed to this process)."""
    if not hasattr(socket, "AF_NETLINK"):
        raise OSError("no netlink sockets on this system")
    found: set[int] = set()
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as link:
        for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), 1):
            request = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 1 << TCP_LISTEN)
            link.send(_HEADER.pack(_HEADER.size + len(request), SOCK_DIAG_BY_FAMILY,
                                   NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + request)
            found.update(_answers(link, port))
    return found


def _answers(link: socket.socket, port: int) -> set[int]:
    """Read one dump to its end: the listening sockets' inodes on `port`."""
    found: set[int] = set()
    while True:
        data = link.recv(65536)
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, kind, _, _, _ = _HEADER.unpack_from(data, offset)
            if kind == NLMSG_DONE:
                return found
            if kind == NLMSG_ERROR or length < _HEADER.size:
                raise OSError("the kernel refused the socket diagnostics request")
            body = offset + _HEADER.size
            state = data[body + 1]
            local_port = struct.unpack_from("!H", data, body + 4)[0]
            if state == TCP_LISTEN and local_port == port:
                found.add(struct.unpack_from("=I", data, body + _INODE_AT)[0])
            offset += (length + 3) & ~3   # NLMSG_ALIGN
        if not data:
            raise OSError("the socket diagnostics dump ended early")


def socket_owner(inodes: set[int]) -> int | None:
    """The lowest pid holding one of the sockets (as psutil lists them: the parent of a
    server whose workers share its listening socket); None if no readable process
    holds one (another user's, unless run as root)."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    return pid
            except OSError:
                continue
    return None
