"""What ``apply()`` would send, object by object, without writing (what ``oam-operator diff`` compares).

``Reconciler.plan()`` runs the same normalisation as ``apply()`` (steps 1–7 and the confinement
check) and stamps each object exactly as the write would (:func:`stamped`: the owner-id label,
the owner-id and digest annotations, the finalizer of a type provider), in apply order; the
``extra_labels`` option is set before, in step 4, so it is part of the digest. A caller dry-runs
the bodies with the reconciler's field manager to preview a change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .discovery import ApiResource
from .objects import ObjectRef

__all__ = ["PlannedObject", "stamped"]


@dataclass(frozen=True)
class PlannedObject:
    """One object as ``apply()`` would write it; ``apply_order`` is its wave."""

    apply_order: int
    ref: ObjectRef
    resource: ApiResource | None
    body: dict[str, Any]


def stamped(
    manifest: Mapping[str, Any], *, owner_key: str, hashed_owner_id: str, owner_id: str, digest_key: str, digest: str
) -> dict[str, Any]:
    """``manifest`` with the ownership label and annotations every write of the reconciler carries."""
    desired = dict(manifest)
    metadata = dict(desired.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), owner_key: hashed_owner_id}
    metadata["annotations"] = {**(metadata.get("annotations") or {}), owner_key: owner_id, digest_key: digest}
    desired["metadata"] = metadata
    return desired


def with_finalizer(body: Mapping[str, Any], finalizer: str) -> dict[str, Any]:
    """``body`` (deep-copied, no managedFields) carrying ``finalizer``, as a type provider is written."""
    result = copy.deepcopy(dict(body))
    metadata = result.setdefault("metadata", {})
    metadata.pop("managedFields", None)
    finalizers = list(metadata.get("finalizers") or [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)
    metadata["finalizers"] = finalizers
    return result
