"""Plain copies of kopf's bodies.

kopf hands handlers live views of its bodies (``kopf.Body`` and friends) that change under a
running pass when a new event arrives. A pass, and an admission decision, read the object
once: they work on a detached copy of plain dicts and lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain(value: Any) -> Any:
    """``value`` with every mapping a new ``dict`` and every list a new ``list`` (leaves shared).
    Plain dicts, lists and JSON scalars, nearly all of a body, are told by their exact type
    first: the ``Mapping`` check is an ABC lookup, a third of the copy's time."""
    kind = type(value)
    if kind is dict:
        return {key: plain(item) for key, item in value.items()}
    if kind is list:
        return [plain(item) for item in value]
    if kind in _LEAVES:
        return value
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


_LEAVES = frozenset({str, int, float, bool, type(None)})


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
