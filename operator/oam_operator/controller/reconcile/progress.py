"""Progress messages built from the reconciler's report (docs/operator.md#progress-messages)."""

from __future__ import annotations

from collections.abc import Sequence

from oam_operator.reconciler.inventory import InventoryItem
from oam_operator.reconciler.report import CallReport

MAX_LISTED = 3


def describe_item(item: InventoryItem, detail: str, namespace: str) -> str:
    """``<Kind> <name> (<detail>)``; ``<Kind> <ns>/<name>`` outside the Application's namespace."""
    where = item.name if not item.namespace or item.namespace == namespace else f"{item.namespace}/{item.name}"
    return f"{item.kind} {where} ({detail})"


def item_list(pending: Sequence[tuple[InventoryItem, str]], namespace: str) -> str:
    listed = [describe_item(item, detail, namespace) for item, detail in pending[:MAX_LISTED]]
    text = ", ".join(listed)
    if len(pending) > MAX_LISTED:
        text += f", and {len(pending) - MAX_LISTED} more"
    return text


def apply_progress(report: CallReport, namespace: str, bundle: str | None, ready: int, objects: int,
                   new_items: int) -> str:
    """The Processing message for an ``apply()`` that returned ``False``."""
    items = item_list(report.pending, namespace)
    if report.outcome == "checkpoint":
        return checkpoint_progress(new_items)
    if report.outcome == "waiting":
        return f"Waiting for bundle {bundle} ({ready}/{objects} ready): {items}"
    if report.outcome == "purging":
        return f"Waiting for bundle {bundle}: removing completed objects: {items}"
    if report.outcome == "pruning":
        return f"Pruning objects removed from the Application: {items}"
    return f"Waiting for objects: {items}" if items else "Processing"


def checkpoint_progress(new_items: int) -> str:
    """The Processing message of an inventory checkpoint (written before the objects exist)."""
    return f"Recorded {new_items} new objects in the inventory"


def delete_progress(report: CallReport, namespace: str) -> str:
    return f"Deleting dependent objects: waiting for {item_list(report.pending, namespace)}"


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
