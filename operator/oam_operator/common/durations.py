"""Go duration strings (``90s``, ``1h30m``, ``1.5h``), parsed exactly as Go's ``time.ParseDuration``.

The one parser for every duration the project reads: the operator's settings,
``spec.interval``/``spec.timeout``, the reconciler's ``reapply-interval`` and the transform's
duration properties — so a value means the same everywhere and matches what the API server's
CEL ``duration()`` accepts. Arithmetic is on integer nanoseconds, like Go, including its
overflow limit (about 292 years) and its truncation of fractional nanoseconds.

It is stdlib-only, so ``oam``, ``reconciler``, ``api`` and ``controller`` all import it without
loading a cluster client. A refusal's wording is a parameter (:class:`DurationMessages`): the
operator's own ``invalid duration '<text>'`` by default, or — for the transform, whose messages
must match kurel's byte for byte — Go's ``time:`` texts with Go's quoting (``oam.formatting.duration``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

__all__ = [
    "CRD_DURATION_PATTERN",
    "OPERATOR_MESSAGES",
    "DurationMessages",
    "format_seconds",
    "parse_go_duration",
    "parse_go_duration_ns",
]

# The spelling accepted by the CRD (docs/operator.md#spec-fields): unsigned, units ms/s/m/h. A subset of Go's grammar.
CRD_DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX = 1 << 63  # Go accumulates in uint64 and allows -2^63 .. 2^63-1
_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?")
_UNIT = re.compile(r"[^0-9.]*")


@dataclass(frozen=True)
class DurationMessages:
    """How a refusal reads. ``{text}`` is the quoted value, ``{unit}`` the quoted unknown unit.

    ``error`` builds the exception from the finished message, so each caller raises its own type.
    """

    invalid: str
    missing_unit: str
    unknown_unit: str
    quote: Callable[[str], str] = repr
    error: Callable[[str], Exception] = ValueError

    def refuse(self, template: str, text: str, unit: str = "") -> Exception:
        return self.error(template.format(text=self.quote(text), unit=self.quote(unit)))


# The operator's wording: one message whatever the fault (settings and annotations wrap it anyway).
OPERATOR_MESSAGES = DurationMessages(
    invalid="invalid duration {text}",
    missing_unit="invalid duration {text}",
    unknown_unit="invalid duration {text}",
)


def parse_go_duration_ns(text: str, messages: DurationMessages = OPERATOR_MESSAGES) -> int:
    """Nanoseconds of ``text``; raises ``messages.error`` on anything Go refuses."""
    s = text
    negative = False
    if s[:1] in ("+", "-"):
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise messages.refuse(messages.invalid, text)
    total = 0
    pos = 0
    while pos < len(s):
        number = _NUMBER.match(s, pos)
        assert number is not None  # the pattern matches the empty string
        whole, fraction = number.group(1), number.group(2)
        if not whole and not fraction:
            raise messages.refuse(messages.invalid, text)
        unit_match = _UNIT.match(s, number.end())
        assert unit_match is not None
        unit_text = unit_match.group(0)
        if not unit_text:
            raise messages.refuse(messages.missing_unit, text)
        unit = _UNITS_NS.get(unit_text)
        if unit is None:
            raise messages.refuse(messages.unknown_unit, text, unit_text)
        value = int(whole or "0")
        if value > _MAX // unit:
            raise messages.refuse(messages.invalid, text)
        value *= unit
        if fraction:
            kept, scale = _leading_fraction(fraction)
            value += int(float(kept) * (float(unit) / scale))
            if value > _MAX:
                raise messages.refuse(messages.invalid, text)
        total += value
        if total > _MAX:
            raise messages.refuse(messages.invalid, text)
        pos = unit_match.end()
    if not negative and total > _MAX - 1:
        raise messages.refuse(messages.invalid, text)
    return -total if negative else total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """Go's ``leadingFraction``: digits that would overflow an int64 are dropped, not rounded."""
    value, scale = 0, 1.0
    for char in digits:
        if value > (_MAX - 1) // 10:
            break
        candidate = value * 10 + int(char)
        if candidate > _MAX:
            break
        value, scale = candidate, scale * 10
    return value, scale


def parse_go_duration(text: str) -> timedelta:
    """``text`` as a ``timedelta`` (truncated to microseconds toward zero)."""
    ns = parse_go_duration_ns(text)
    micros = abs(ns) // 1000
    return timedelta(microseconds=-micros if ns < 0 else micros)


def format_seconds(seconds: float) -> str:
    """A short Go-style spelling for messages (``30s``, ``10m``, ``1h30m``, ``1.5s``)."""
    if seconds != int(seconds):
        return f"{seconds:g}s"
    rest = int(seconds)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"
