"""The object reconciler: applies, prunes and deletes objects with an inventory. No kopf.

A library (docs/reconciler.md): build a ``ClusterClient`` for the target cluster, a
``Reconciler`` with a name and ``ReconcilerOptions``, and call ``apply()``, ``delete()`` and
``is_deletion_allowed()`` with an inventory the caller persists after every call.

The names below are imported when first used, not with the package: a command that needs
one module of it (``oam-operator status``) does not load the rest (docs/operator.md#the-command-line).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import ClusterClient
    from .errors import (
        ApiError,
        InconsistentStateError,
        InstancesExistError,
        InventoryCorruptError,
        ObjectValidationError,
        OwnershipConflictError,
        PermanentApiError,
        ReconcilerError,
        TransientApiError,
    )
    from .inventory import InventoryItem, Phase, dump_inventory, load_inventory
    from .metrics import ReconcilerMetrics
    from .objectpolicies import AdoptionPolicy, DeletePolicy, MissingNamespacesPolicy, ReconcilePolicy, UpdatePolicy
    from .options import ReconcilerOptions
    from .ratelimit import RateLimiter, configure_default_rate_limiter
    from .reconciler import Reconciler
    from .report import CallReport
    from .typeinfo import TypeInfo, TypeVersionInfo

_SOURCES = {
    "ClusterClient": ".client",
    "ApiError": ".errors",
    "InconsistentStateError": ".errors",
    "InstancesExistError": ".errors",
    "InventoryCorruptError": ".errors",
    "ObjectValidationError": ".errors",
    "OwnershipConflictError": ".errors",
    "PermanentApiError": ".errors",
    "ReconcilerError": ".errors",
    "TransientApiError": ".errors",
    "InventoryItem": ".inventory",
    "Phase": ".inventory",
    "dump_inventory": ".inventory",
    "load_inventory": ".inventory",
    "ReconcilerMetrics": ".metrics",
    "AdoptionPolicy": ".objectpolicies",
    "DeletePolicy": ".objectpolicies",
    "MissingNamespacesPolicy": ".objectpolicies",
    "ReconcilePolicy": ".objectpolicies",
    "UpdatePolicy": ".objectpolicies",
    "ReconcilerOptions": ".options",
    "RateLimiter": ".ratelimit",
    "configure_default_rate_limiter": ".ratelimit",
    "Reconciler": ".reconciler",
    "CallReport": ".report",
    "TypeInfo": ".typeinfo",
    "TypeVersionInfo": ".typeinfo",
}

__all__ = [
    "AdoptionPolicy",
    "ApiError",
    "CallReport",
    "ClusterClient",
    "DeletePolicy",
    "InconsistentStateError",
    "InstancesExistError",
    "InventoryCorruptError",
    "InventoryItem",
    "MissingNamespacesPolicy",
    "ObjectValidationError",
    "OwnershipConflictError",
    "PermanentApiError",
    "Phase",
    "RateLimiter",
    "ReconcilePolicy",
    "Reconciler",
    "ReconcilerError",
    "ReconcilerMetrics",
    "ReconcilerOptions",
    "TransientApiError",
    "TypeInfo",
    "TypeVersionInfo",
    "UpdatePolicy",
    "configure_default_rate_limiter",
    "dump_inventory",
    "load_inventory",
]


def __getattr__(name: str) -> Any:
    """Import a re-exported name's module on first use (PEP 562)."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value
