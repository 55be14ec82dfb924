"""Pydantic models of the CRDs (spec, status, inventory) and CRD generation (docs/operator.md#the-application-resource,
docs/operator.md#the-clusterprofile-resource).

The models are the single source of the CRD schemas (``api/crd.py`` renders them into
``crds/``) and the typed view the operator and the CLI read Applications through.
"""

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
