"""Which of the page's actions apply now (docs/ui.md#actions): a button that cannot do anything
useful is disabled, with the reason as its tooltip, instead of asking the API server for a no-op
or a refusal. Each function returns the reason, ``""`` when the action applies."""

from __future__ import annotations

__all__ = ["action_blocks", "rollback_block"]

SUSPENDED = "the Application is suspended: resume it first"


def action_blocks(suspended: bool) -> dict[str, str]:
    """Why Reconcile, Suspend and Resume are each disabled (``""``: enabled)."""
    return {
        "reconcile": SUSPENDED if suspended else "",
        "suspend": "the Application is already suspended" if suspended else "",
        "resume": "" if suspended else "the Application is not suspended",
    }


def rollback_block(revision: int, current: int | None, suspended: bool) -> str:
    """Why rolling back to ``revision`` is disabled: it is the current one, or the Application is
    suspended (``oam-operator rollback`` refuses both)."""
    if revision == current:
        return f"revision {revision} is the current revision"
    return SUSPENDED if suspended else ""
