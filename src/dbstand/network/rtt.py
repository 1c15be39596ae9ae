"""The RTT axis: `--db-rtt 0,0.2ms,1ms` parsed into the paths a case can take.

`0` is the direct path (no proxy). Any non-zero value adds the "proxy, 0 ms" path, so
the proxy's own cost is a row of its own. A value is a number with `ms` or `us`, in
whole microseconds, from 1 µs to 1 s. The asked RTT is split between the directions:
the request waits half of it on its way to the database and the answer the other half
on its way back (an odd microsecond goes to the request), so one request and its
answer gain the whole RTT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbstand.errors import UserError

DIRECT = "direct"
MAX_RTT_US = 1_000_000
_VALUE = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|us|µs)?$")


@dataclass(frozen=True)
class RttPath:
    """One value of the axis: direct (no proxy) or through the proxy with `rtt_us`."""

    rtt_us: int | None

    @property
    def label(self) -> str:
        """The case parameter: "direct", "0 ms", "0.2 ms" (compare matches on it)."""
        return DIRECT if self.rtt_us is None else f"{self.rtt_us / 1000:g} ms"

    @property
    def title(self) -> str:
        """How a table shows it: "direct", "proxy, 0 ms", "0.2 ms"."""
        if self.rtt_us is None:
            return DIRECT
        return "proxy, 0 ms" if self.rtt_us == 0 else self.label

    def split_us(self) -> tuple[int, int]:
        """(request direction, answer direction) in µs: half each way."""
        rtt = self.rtt_us or 0
        return rtt - rtt // 2, rtt // 2


def path_of(label: str) -> RttPath:
    """The path a case parameter names ("direct", "0 ms", "0.5 ms"; "": a case of a run
    without the axis, on the direct path)."""
    if label in (DIRECT, ""):
        return RttPath(None)
    return _path(label.replace(" ", ""), "db_rtt")


def _path(text: str, option: str) -> RttPath:
    """A value as typed: bare `0` is the direct path, `0ms` the proxy without delay."""
    match = _VALUE.match(text.strip().lower())
    if match is None or (match.group(2) is None and float(match.group(1)) != 0):
        raise UserError(f"{option}: {text!r} is not a round-trip time: write 0 (direct), "
                        "or a number with ms or us, e.g. 0.2ms or 500us")
    number, unit = float(match.group(1)), match.group(2)
    if unit is None:
        return RttPath(None)
    micros = number * 1000 if unit == "ms" else number
    if abs(micros - round(micros)) > 1e-6:
        raise UserError(f"{option}: {text!r} is not a whole number of microseconds")
    if micros > MAX_RTT_US:
        raise UserError(f"{option}: {text!r} is more than 1 s")
    return RttPath(round(micros))


def parse_rtts(text: str, option: str = "--db-rtt") -> list[RttPath]:
    """The paths of `--db-rtt`: each value once, in the order given, plus the
    "proxy, 0 ms" path right after "direct" (or first) when any value is non-zero."""
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values:
        raise UserError(f"{option}: give at least one round-trip time, e.g. 0,0.2ms,1ms")
    paths: list[RttPath] = []
    for value in values:
        path = _path(value, option)
        if path not in paths:
            paths.append(path)
    if any(p.rtt_us for p in paths) and RttPath(0) not in paths:
        paths.insert(1 if RttPath(None) in paths else 0, RttPath(0))
    return paths
