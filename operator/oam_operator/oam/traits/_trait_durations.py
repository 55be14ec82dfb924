"""Duration properties of traits (``certificate`` ``duration``/``renewBefore``, ``external-secret``
``refreshInterval``): parsed as Go durations and printed as Go prints them (docs/transform.md#durations-and-quantities).

kurel parses these when it builds the typed object, so a bad value is a generation error
(``invalid <field> "<d>": <Go duration error>``, docs/transform.md#certificates-secrets-and-configuration) rather than a
trait error.

Decisions where the spec is silent: an absent, null or empty value takes the default; a
non-string value is parsed from its Go ``%v`` text (so ``5`` fails with Go's missing-unit
error rather than a type error).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.duration import DurationError, normalize_duration
from oam_operator.oam.errors import GenerationError
from oam_operator.oam.gofmt import go_quote, go_value


def duration_text(value: Any, default: str) -> str:
    """The authored text of a duration property, or ``default``."""
    if value is None or value == "":
        return default
    return value if isinstance(value, str) else go_value(value)


def go_duration(text: str, label: str) -> str:
    """``text`` printed as a Go duration; ``label`` names it in the error (``duration``, ``renewBefore``)."""
    try:
        return normalize_duration(text)
    except DurationError as exc:
        raise GenerationError(f"invalid {label} {go_quote(text)}: {exc.message}") from exc
