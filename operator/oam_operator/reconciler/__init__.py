"""The object reconciler: applies, prunes and deletes objects with an inventory. No kopf.

A library (docs/reconciler.md): build a ``ClusterClient`` for the target cluster, a
``Reconciler`` with a name and ``ReconcilerOptions``, and call ``apply()``, ``delete()`` and
``is_deletion_allowed()`` with an inventory the caller persists after every call.
"""

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
