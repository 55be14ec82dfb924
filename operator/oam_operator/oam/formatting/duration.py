"""Go durations (docs/transform.md#durations-and-quantities): parsed as ``time.ParseDuration`` and
printed as Go prints them.

kurel reads every duration field into a ``time.Duration``, so ``60m`` prints as ``1h0m0s``;
byte compatibility needs the same parse (and its error texts) and the same printing.
"""

from __future__ import annotations

from typing import Any

from oam_operator.common.durations import DurationMessages, parse_go_duration_ns
from oam_operator.oam.errors import GenerationError, ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value


class DurationError(ValidationError):
    """A Go ``time.ParseDuration`` error; the message is Go's text."""


# Go's texts and quoting, so a refusal reads as kurel's does.
GO_MESSAGES = DurationMessages(
    invalid="time: invalid duration {text}",
    missing_unit="time: missing unit in duration {text}",
    unknown_unit="time: unknown unit {unit} in duration {text}",
    quote=go_quote,
    error=DurationError,
)


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (the project's one parser, with Go's error texts)."""
    return parse_go_duration_ns(text, GO_MESSAGES)


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


def duration_text(value: Any, default: str) -> str:
    """The authored text of a trait's duration property, or ``default``.

    Decisions where the spec is silent: an absent, null or empty value takes the default; a
    non-string value is parsed from its Go ``%v`` text (so ``5`` fails with Go's missing-unit
    error rather than a type error).
    """
    if value is None or value == "":
        return default
    return value if isinstance(value, str) else go_value(value)


def go_duration(text: str, label: str) -> str:
    """``text`` printed as a Go duration; ``label`` names it in the error (``duration``, ``renewBefore``).

    kurel parses trait durations (``certificate`` ``duration``/``renewBefore``, ``external-secret``
    ``refreshInterval``) when it builds the typed object, so a bad value is a generation error
    (``invalid <field> "<d>": <Go duration error>``) rather than a trait error.
    """
    try:
        return normalize_duration(text)
    except DurationError as exc:
        raise GenerationError(f"invalid {label} {go_quote(text)}: {exc.message}") from exc
