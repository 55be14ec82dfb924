"""The one wording of a value outside a fixed set (docs/transform.md#refusing-a-value-outside-a-set).

``unknown <noun> "<value>" (valid: <a>, <b>, <c>)``, and ``; did you mean "<x>"?`` when one valid
value is close (``difflib``'s ratio, letter case ignored; a case-only difference always is).
Before, the transform had three wordings for one mistake: ``must be one of: a, b``,
``(allowed: a, b)`` and ``value x not in allowed set [a b]``; the CLI already suggested commands.
A string is quoted as Go's ``%q``, a number is not; the valid values are listed unquoted in the
order the caller gives (the schema's, or an allow-list's sorted order).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from .gofmt import go_quote, go_value

__all__ = ["CLOSE", "closest", "unknown_at", "unknown_value"]

CLOSE = 0.6  # difflib's default cutoff: "infras" ~ "infra" (0.91), "edge" ~ none of the tiers


def _shown(value: Any) -> str:
    return go_quote(value) if isinstance(value, str) else go_value(value)


def closest(value: Any, valid: Iterable[Any]) -> Any | None:
    """The valid value nearest to ``value`` when it is close enough to suggest, else ``None``."""
    if not isinstance(value, str):
        return None
    candidates = [v for v in valid if isinstance(v, str)]
    for candidate in candidates:
        if candidate.lower() == value.lower():
            return candidate
    lowered = {candidate.lower(): candidate for candidate in reversed(candidates)}
    match = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=CLOSE)
    return lowered[match[0]] if match else None


def unknown_value(noun: str, value: Any, valid: Iterable[Any]) -> str:
    """``unknown tier "infras" (valid: infra, services, apps); did you mean "infra"?``"""
    listed = list(valid)
    text = f"unknown {noun} {_shown(value)} (valid: {', '.join(go_value(v) for v in listed) or 'none'})"
    near = closest(value, listed)
    return text if near is None else f"{text}; did you mean {_shown(near)}?"


def unknown_at(path: str, value: Any, valid: Iterable[Any]) -> str:
    """``<path>: unknown <noun> …``, the noun being the path's last name (``properties.tier`` ->
    ``tier``), ``value`` for an array element (``accessModes[0]``)."""
    last = path.rsplit(".", 1)[-1]
    noun = "value" if last.endswith("]") or not last else last
    return f"{path}: {unknown_value(noun, value, valid)}"
