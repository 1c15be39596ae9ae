"""Fresh identities (users, plates, transaction ids) unique by construction.

The database behind a run keeps every row the suite ever made: a whole study (every
case, every pass, warm-up and conformance passes too) shares one set of tables. Ids
drawn at random from 2**31, as the seed's client drew them, meet earlier ones with
odds that grow with the square of the passes: 5 checked users a pass against 2 funded
accounts a pass left behind give 1 - exp(-5 K^2 / 2**31), about 5% over a full
parking study's K ~ 4,700 passes. An old user is not fresh: a refunds user keeps 38.25,
so a later `transfers` user with its id saw 127.50 instead of 89.25.

So each identity ends in a serial no other one shares: this process's start stamp
(milliseconds) and pid, fixed width, then a per-process counter under a lock (the
threads of concurrent virtual users share it). A process that reuses a pid started
after the earlier one ended, so its stamp is later; a forked child takes its own
stamp. The random head in front (from the pass's rng) keeps the ids spread over the
index as random ids are; the serial alone makes them unique. Users stay decimal
strings (user_eid is str:64; every stack treats it as text), plates fit
plate_number's str:32, transaction ids the spec's 4..64 characters.
"""

from __future__ import annotations

import itertools
import os
import random
import string
import threading
import time

_DIGITS36 = string.digits + string.ascii_uppercase
PLATE_LETTERS = "ABCEHKMOPTXY"


def _base36(n: int, width: int = 0) -> str:
    out = ""
    while n or not out:
        n, d = divmod(n, 36)
        out = _DIGITS36[d] + out
    return out.rjust(width, "0")


class _Serials:
    """(stamp ms, pid, n): a triple no other call on this machine gets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = -1
        self._stamp = 0
        self._count = itertools.count()

    def next(self) -> tuple[int, int, int]:
        with self._lock:
            pid = os.getpid()
            if pid != self._pid:  # first use here, or a forked child of the owner
                self._pid, self._stamp = pid, time.time_ns() // 1_000_000
                self._count = itertools.count()
            return self._stamp, pid, next(self._count)


_SERIALS = _Serials()


def user_id(rng: random.Random) -> str:
    """Digits: 9 random, then 13 of stamp, 7 of pid (pid_max <= 2**22), the counter."""
    stamp, pid, n = _SERIALS.next()
    return f"{rng.randrange(10**9):09d}{stamp:013d}{pid:07d}{n}"


def plate(rng: random.Random) -> str:
    """A plate's look (A123BC), then the serial in base 36 (9 + 5 + n: <= 32 chars)."""
    pick = rng.choice
    look = (pick(PLATE_LETTERS) + "".join(pick(string.digits) for _ in range(3)) +
            pick(PLATE_LETTERS) + pick(PLATE_LETTERS))
    stamp, pid, n = _SERIALS.next()
    return f"{look}{_base36(stamp, 9)}{_base36(pid, 5)}{_base36(n)}"


def txid(rng: random.Random) -> str:
    """16 random hex digits, then the serial in hex (11 + 6 + n: well under 64)."""
    stamp, pid, n = _SERIALS.next()
    return f"{rng.getrandbits(64):016x}{stamp:011x}{pid:06x}{n:x}"
