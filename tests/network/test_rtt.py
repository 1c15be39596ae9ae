"""The RTT axis as typed: values, the added 'proxy, 0 ms' path, the split, bad input."""

from __future__ import annotations

import pytest

from dbstand.errors import UserError
from dbstand.network.rtt import RttPath, parse_rtts, path_of


def test_values_and_the_added_proxy_path() -> None:
    paths = parse_rtts("0,0.2ms,1ms")
    assert [p.label for p in paths] == ["direct", "0 ms", "0.2 ms", "1 ms"]
    assert [p.title for p in paths] == ["direct", "proxy, 0 ms", "0.2 ms", "1 ms"]
    assert [p.label for p in parse_rtts("500us")] == ["0 ms", "0.5 ms"]
    assert [p.label for p in parse_rtts("0")] == ["direct"]  # nothing delayed: no proxy
    assert [p.rtt_us for p in parse_rtts("1ms,1000us,0ms")] == [1000, 0]


def test_labels_name_their_path_back() -> None:
    for path in parse_rtts("0,0.2ms,1ms,333us"):
        assert path_of(path.label) == path


def test_the_rtt_is_split_between_the_directions() -> None:
    assert RttPath(500).split_us() == (250, 250)
    assert RttPath(333).split_us() == (167, 166)  # the odd µs goes to the request
    assert sum(RttPath(1).split_us()) == 1


@pytest.mark.parametrize("text, why", [
    ("1", "not a round-trip time"), ("0.2", "not a round-trip time"),
    ("fast", "not a round-trip time"), ("0.0005ms", "whole number of microseconds"),
    ("2000ms", "more than 1 s"), ("", "at least one"), ("-1ms", "not a round-trip time"),
])
def test_bad_values_are_one_clear_line(text: str, why: str) -> None:
    with pytest.raises(UserError, match=why) as info:
        parse_rtts(text)
    assert "\n" not in str(info.value)
