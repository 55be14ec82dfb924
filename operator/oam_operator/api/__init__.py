"""Pydantic models of the CRDs (spec, status, inventory) and CRD generation (docs/operator.md#the-application-resource,
docs/operator.md#the-clusterprofile-resource).

The models are the single source of the CRD schemas (``api/crd.py`` renders them into
``crds/``) and the typed view the operator and the CLI read Applications through.

The names below are imported when first used, not with the package: a command that needs
one module of it (``oam-operator status``) does not load the rest (docs/operator.md#the-command-line).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..persisted.inventory import InventoryItem, Phase, TypeVersionInfo
    from ..persisted.objectpolicies import (
        AdoptionPolicy,
        ApplicationDeletePolicy,
        DeletePolicy,
        ReconcilePolicy,
        UpdatePolicy,
    )
    from .application import (
        Application,
        ApplicationSpec,
        ApplicationStatus,
        BundleState,
        BundleStatus,
        Component,
        DependencyStatus,
        Policy,
        Trait,
        Waves,
    )
    from .conditions import Condition, ConditionStatus, ConditionType, Reason, State, conditions_for, find_condition
    from .meta import API_VERSION, GROUP, VERSION, ObjectMeta, format_timestamp
    from .profile import Capability, ClusterProfile, ClusterProfileSpec, GitopsEngine

_SOURCES = {
    "InventoryItem": "..persisted.inventory",
    "Phase": "..persisted.inventory",
    "TypeVersionInfo": "..persisted.inventory",
    "AdoptionPolicy": "..persisted.objectpolicies",
    "ApplicationDeletePolicy": "..persisted.objectpolicies",
    "DeletePolicy": "..persisted.objectpolicies",
    "ReconcilePolicy": "..persisted.objectpolicies",
    "UpdatePolicy": "..persisted.objectpolicies",
    "Application": ".application",
    "ApplicationSpec": ".application",
    "ApplicationStatus": ".application",
    "BundleState": ".application",
    "BundleStatus": ".application",
    "Component": ".application",
    "DependencyStatus": ".application",
    "Policy": ".application",
    "Trait": ".application",
    "Waves": ".application",
    "Condition": ".conditions",
    "ConditionStatus": ".conditions",
    "ConditionType": ".conditions",
    "Reason": ".conditions",
    "State": ".conditions",
    "conditions_for": ".conditions",
    "find_condition": ".conditions",
    "API_VERSION": ".meta",
    "GROUP": ".meta",
    "VERSION": ".meta",
    "ObjectMeta": ".meta",
    "format_timestamp": ".meta",
    "Capability": ".profile",
    "ClusterProfile": ".profile",
    "ClusterProfileSpec": ".profile",
    "GitopsEngine": ".profile",
}

__all__ = [
    "API_VERSION",
    "GROUP",
    "VERSION",
    "AdoptionPolicy",
    "Application",
    "ApplicationDeletePolicy",
    "ApplicationSpec",
    "ApplicationStatus",
    "BundleState",
    "BundleStatus",
    "Capability",
    "ClusterProfile",
    "ClusterProfileSpec",
    "Component",
    "Condition",
    "ConditionStatus",
    "ConditionType",
    "DeletePolicy",
    "DependencyStatus",
    "GitopsEngine",
    "InventoryItem",
    "ObjectMeta",
    "Phase",
    "Policy",
    "Reason",
    "ReconcilePolicy",
    "State",
    "Trait",
    "TypeVersionInfo",
    "UpdatePolicy",
    "Waves",
    "conditions_for",
    "find_condition",
    "format_timestamp",
]


def __getattr__(name: str) -> Any:
    """Import a re-exported name's module on first use (PEP 562)."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value
