"""Go durations (docs/transform.md#durations-and-quantities): parsed as ``time.ParseDuration`` and printed as Go prints
them.

kurel reads every duration field into a ``time.Duration``, so ``60m`` prints as ``1h0m0s``;
byte compatibility needs the same parse (and its error texts) and the same printing.
"""

from __future__ import annotations

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.gofmt import go_quote

_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX = 1 << 63


class DurationError(ValidationError):
    """A Go ``time.ParseDuration`` error; the message is Go's text."""


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string."""
    invalid = DurationError(f"time: invalid duration {go_quote(text)}")
    s = text
    negative = False
    if s and s[0] in "+-":
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre = i > 0
        whole = int(s[:i]) if pre else 0
        s = s[i:]
        frac, scale, post = 0, 1.0, False
        if s.startswith("."):
            s = s[1:]
            i = 0
            while i < len(s) and "0" <= s[i] <= "9":
                i += 1
            post = i > 0
            for ch in s[:i]:
                if frac > (_MAX - 1) // 10:
                    break  # Go drops precision past int64
                frac = frac * 10 + int(ch)
                scale *= 10
            s = s[i:]
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        unit_text, s = s[:i], s[i:]
        if not unit_text:
            raise DurationError(f"time: missing unit in duration {go_quote(text)}")
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise DurationError(f"time: unknown unit {go_quote(unit_text)} in duration {go_quote(text)}")
        if whole > (_MAX - 1) // unit:
            raise invalid
        value = whole * unit
        if frac:
            value += int(float(frac) * (float(unit) / scale))
        total += value
        if total > _MAX - (0 if negative else 1):
            raise invalid
    return -total if negative else total


def _fraction(value: int, digits: int) -> str:
    whole, frac = divmod(value, 10**digits)
    text = str(whole)
    if frac:
        text += "." + str(frac).rjust(digits, "0").rstrip("0")
    return text


def format_duration(ns: int) -> str:
    """Go's ``Duration.String()``: ``0s``, ``1.5ms``, ``1m30s``, ``1h0m0s``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        return f"{sign}{_fraction(u, 3)}µs"
    if u < 1_000_000_000:
        return f"{sign}{_fraction(u, 6)}ms"
    seconds, frac_ns = divmod(u, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = _fraction(secs * 1_000_000_000 + frac_ns, 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{sec_text}"
    if minutes:
        return f"{sign}{minutes}m{sec_text}"
    return sign + sec_text


def normalize_duration(text: str) -> str:
    """Parse and print back: ``60m`` → ``1h0m0s``."""
    return format_duration(parse_duration(text))
