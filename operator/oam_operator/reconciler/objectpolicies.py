"""Policy enums (docs/reconciler.md#policies). Their values are persisted in the inventory, so they are spelled
exactly as the Go implementation spells them.

Defined once in ``oam_operator.persisted.objectpolicies``; re-exported here as part of the library.
"""

from __future__ import annotations

from oam_operator.persisted.objectpolicies import (
    AdoptionPolicy,
    DeletePolicy,
    MissingNamespacesPolicy,
    ReconcilePolicy,
    UpdatePolicy,
)

__all__ = [
    "AdoptionPolicy",
    "DeletePolicy",
    "MissingNamespacesPolicy",
    "ReconcilePolicy",
    "UpdatePolicy",
]
