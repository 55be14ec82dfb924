"""How the UI colours a condition (docs/ui.md#conditions-and-drift): the polarity of each type.

``Ready`` is normal when True; ``Reconciling``, ``Stalled`` and ``Drifted`` are "abnormal-true"
(kstatus's convention): their True is news, not health, so ``Stalled True`` is drawn as a
failure, ``Drifted True`` as a warning and ``Reconciling True`` as work in progress, and their
False as normal. A type the UI does not know is drawn neutral: guessing its polarity would paint
a failure green."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["condition_tone", "drift_condition"]

#: the tone of True for each abnormal-true type
_ABNORMAL_TRUE = {"Reconciling": "progress", "Stalled": "bad", "Drifted": "warn"}


def condition_tone(kind: str, status: str) -> str:
    """``ok``, ``progress``, ``warn``, ``bad`` or ``neutral`` (a CSS class of the page)."""
    if kind == "Ready":
        return {"True": "ok", "False": "bad"}.get(status, "progress")
    if kind in _ABNORMAL_TRUE:
        return {"True": _ABNORMAL_TRUE[kind], "False": "ok"}.get(status, "progress")
    return "neutral"


def drift_condition(app: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Application's ``Drifted`` condition when its status is True, else ``None``."""
    status = app.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") == "Drifted":
            return condition if condition.get("status") == "True" else None
    return None
