"""Plain copies of kopf's bodies.

kopf hands handlers live views of its bodies (``kopf.Body`` and friends) that change under a
running pass when a new event arrives. A pass, and an admission decision, read the object
once: they work on a detached copy of plain dicts and lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.common.treecopy import copy_tree


def plain(value: Any) -> Any:
    """``value`` with every mapping a new ``dict`` and every list a new ``list`` (leaves shared):
    kopf's bodies and its other mappings become plain trees a pass may keep and change."""
    return copy_tree(value, _plain_other)


def _plain_other(value: Any) -> Any:
    """A node that is not a plain dict, list or JSON scalar: other mappings and lists are rebuilt,
    any other leaf is shared."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def snapshot(body: Mapping[str, Any]) -> dict[str, Any]:
    """A plain, detached copy of kopf's live body: read once at the start of a pass.

    ``metadata.managedFields``, often the largest part, is not copied but shared: kopf replaces a
    body's contents with each event rather than changing them, and no pass writes into it (it is
    only read, for the size check of controller/reconcile/limits.py)."""
    copied = {key: plain(value) for key, value in body.items() if key != "metadata"}
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping):
        copied["metadata"] = {key: value if key == "managedFields" else plain(value)
                              for key, value in metadata.items()}
    elif "metadata" in body:
        copied["metadata"] = plain(metadata)
    return copied
