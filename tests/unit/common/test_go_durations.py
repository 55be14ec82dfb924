"""The Go duration parser shared by settings, the Application spec and the reconciler."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from oam_operator.common.durations import CRD_DURATION_PATTERN, format_seconds, parse_go_duration, parse_go_duration_ns

S = 1_000_000_000

# Cases from Go's time.ParseDuration tests (src/time/time_test.go).
VALID = [
    ("0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    ("-5s", -5 * S),
    ("+5s", 5 * S),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600_000_000),
    ("5.s", 5 * S),
    (".5s", S // 2),
    ("1.0s", S),
    ("1.00s", S),
    ("1.004s", S + 4_000_000),
    ("1.0040s", S + 4_000_000),
    ("100.00100s", 100 * S + 1_000_000),
    ("10ns", 10),
    ("11us", 11_000),
    ("12µs", 12_000),
    ("12μs", 12_000),
    ("13ms", 13_000_000),
    ("14s", 14 * S),
    ("15m", 15 * 60 * S),
    ("16h", 16 * 3600 * S),
    ("3h30m", (3 * 3600 + 30 * 60) * S),
    ("10.5s4m", 4 * 60 * S + 10 * S + S // 2),
    ("-2m3.4s", -(2 * 60 * S + 3 * S + 400_000_000)),
    ("1h2m3s4ms5us6ns", 3600 * S + 2 * 60 * S + 3 * S + 4_000_000 + 5_000 + 6),
    ("39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * S + 425_000_000),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * 60 * S),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("0.100000000000000000000h", 6 * 60 * S),
    ("0.830103483285477580700h", 49 * 60 * S + 48 * S + 372_539_827),
]

INVALID = [
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\x85\x85",
    "\xffff",
    "hello \xffff world",
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854775.808us",
    "1s ",
    " 1s",
    "1 s",
    "1e3s",
]


@pytest.mark.parametrize(("text", "ns"), VALID)
def test_valid_durations(text: str, ns: int) -> None:
    assert parse_go_duration_ns(text) == ns


@pytest.mark.parametrize("text", INVALID)
def test_invalid_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_go_duration_ns(text)


def test_timedelta_truncates_toward_zero() -> None:
    assert parse_go_duration("1h30m") == timedelta(hours=1, minutes=30)
    assert parse_go_duration("1500ns") == timedelta(microseconds=1)
    assert parse_go_duration("-1500ns") == timedelta(microseconds=-1)
    assert parse_go_duration("-1.5s") == timedelta(seconds=-1.5)


@pytest.mark.parametrize("text", ["30s", "10m", "1h30m", "1.5h", "500ms", "0.5m1s"])
def test_crd_pattern_accepts_a_subset_of_go_durations(text: str) -> None:
    assert re.match(CRD_DURATION_PATTERN, text)
    parse_go_duration(text)


@pytest.mark.parametrize("text", ["0", "-1h", ".5s", "1us", "10", "10 m", "1d"])
def test_crd_pattern_refuses_the_rest(text: str) -> None:
    assert not re.match(CRD_DURATION_PATTERN, text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(30, "30s"), (600, "10m"), (5400, "1h30m"), (3600, "1h"), (0, "0s"), (1.5, "1.5s")]
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text
