"""Server-side apply specifics: the managedFields migration (docs/reconciler.md#managedfields-migration).

Objects written with PUT at some point (or edited with kubectl) carry ``Update`` entries in
``managedFields``. A forced apply alone would leave fields that only those entries own, even
when the manifest dropped them. Folding those entries into our ``Apply`` entry first makes the
next forced apply remove exactly the fields our manifest no longer contains, while the fields
of every other manager survive.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["merge_field_sets", "migrate_managed_fields"]


def merge_field_sets(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Union of two ``fieldsV1`` tries: keys of either, nested objects merged the same way."""
    out: dict[str, Any] = copy.deepcopy(dict(a))
    for key, value in b.items():
        mine = out.get(key)
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            out[key] = merge_field_sets(mine, value)
        elif key not in out:
            out[key] = copy.deepcopy(value)
    return out


def migrate_managed_fields(
    entries: Sequence[Mapping[str, Any]], field_owner: str, reclaimed_prefixes: Sequence[str]
) -> tuple[list[dict[str, Any]], bool]:
    """Fold our ``Update`` entries (and those of reclaimed managers) into our ``Apply`` entry.

    Returns the new list (kept entries in order, our ``Apply`` entry last) and whether
    anything changed; the list is meant to be sent only when it did.
    """

    def is_our_apply(e: Mapping[str, Any]) -> bool:
        return e.get("manager") == field_owner and e.get("operation") == "Apply" and not e.get("subresource")

    our_apply_index = max((i for i, e in enumerate(entries) if is_our_apply(e)), default=None)
    our_apply = copy.deepcopy(dict(entries[our_apply_index])) if our_apply_index is not None else None
    kept: list[dict[str, Any]] = []
    changed = False
    for index, entry in enumerate(entries):
        if index == our_apply_index:
            continue
        manager = str(entry.get("manager") or "")
        migrate = not entry.get("subresource") and (
            manager == field_owner or any(manager.startswith(p) for p in reclaimed_prefixes)
        )
        if not migrate:
            kept.append(copy.deepcopy(dict(entry)))
            continue
        changed = True
        if our_apply is None:
            our_apply = copy.deepcopy(dict(entry))
            our_apply["manager"] = field_owner
            our_apply["operation"] = "Apply"
        else:
            our_apply["fieldsV1"] = merge_field_sets(our_apply.get("fieldsV1") or {}, entry.get("fieldsV1") or {})
    if our_apply is not None:
        kept.append(our_apply)
    return kept, changed
