"""The ClusterProfile kind (docs/operator.md#the-clusterprofile-resource): cluster-scoped platform defaults for trait
properties, and where its Applications are delivered (docs/multicluster.md#the-clusterprofile-fields).

Only the shape is declared; the transform validates the contents of each capability's
``rendering`` (and the capability keys), so those stay free-form here. ``kubeConfig`` and
``allowedNamespaces`` are the operator's, never the transform's (controller/reconcile/delivery.py), and so is
``changeWindows``, when its Applications' changes may land (docs/operator.md#change-windows): its schema here is
the shape; the operator reads the values (schedules, zones, durations) with the change-window policy's rules.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from ..common.dns1123 import DNS1123_LABEL_FMT, DNS1123_SUBDOMAIN_FMT
from .conditions import Condition
from .healthexpr import HealthExpression
from .meta import API_VERSION, API_VERSION_DESCRIPTION, KIND_DESCRIPTION, ApiModel, ObjectMeta, metadata_field

__all__ = ["Capability", "ChangeWindow", "ChangeWindowKind", "ChangeWindows", "ClusterProfile", "ClusterProfileSpec",
           "ClusterProfileStatus", "DriftWhileClosed", "GitopsEngine", "KubeConfigReference", "SecretKeyReference"]


class GitopsEngine(StrEnum):
    """GitOps engine whose sources the transform generates."""

    FLUXCD = "fluxcd"


class Capability(ApiModel):
    """Platform defaults for one trait type (or one scope of it)."""

    rendering: dict[str, Any] = Field(
        default_factory=dict,
        description="Default trait properties, validated by the transform against the trait type.",
        json_schema_extra={"x-kubernetes-preserve-unknown-fields": True},
    )


class SecretKeyReference(ApiModel):
    """A key of a Secret on the operator's own cluster (Flux's ``kubeConfig.secretRef`` layout)."""

    name: str = Field(min_length=1, max_length=253, pattern=f"^{DNS1123_SUBDOMAIN_FMT}$",
                      description="Name of the Secret.")
    namespace: str | None = Field(
        default=None, min_length=1, max_length=63, pattern=f"^{DNS1123_LABEL_FMT}$",
        description="Namespace of the Secret (default: the operator's; another one only when the operator "
        "allows it with --profile-secret-namespaces).",
    )
    key: str = Field(default="value", min_length=1, max_length=253, pattern=r"^[-._a-zA-Z0-9]+$",
                     description="Key of the Secret's data holding the kubeconfig.")


class KubeConfigReference(ApiModel):
    """How the operator reaches the cluster this profile describes."""

    secret_ref: SecretKeyReference = Field(description="The Secret holding the kubeconfig.")


class ChangeWindowKind(StrEnum):
    """Whether changes may land while a window is open (allow) or may not (deny)."""

    ALLOW = "allow"
    DENY = "deny"


class DriftWhileClosed(StrEnum):
    """What happens to drift while the windows are closed."""

    CORRECT = "Correct"
    REPORT = "Report"


class ChangeWindow(ApiModel):
    """One window, as a change-window policy's (docs/operator.md#change-windows)."""

    kind: ChangeWindowKind = Field(description="allow (a change may land while it is open) or deny (none lands "
                                               "while it is open).")
    schedule: str = Field(min_length=1, max_length=256,
                          description="When the window opens: a five-field cron expression (minute hour "
                                      "day-of-month month day-of-week), such as 0 22 * * 5.")
    duration: str = Field(min_length=1, max_length=64,
                          description="How long it stays open after each opening: a duration such as 30m, 2h or "
                                      "1h30m.")
    time_zone: str | None = Field(default=None, max_length=64,
                                  description="The IANA time zone the schedule is read in, such as Europe/Berlin "
                                              "(default UTC).")


class ChangeWindows(ApiModel):
    """When the changes of the profile's Applications may land; an Application's own windows can only narrow these."""

    windows: list[ChangeWindow] = Field(min_length=1, max_length=100,
                                        description="The windows. A change lands when an allow window is open (or "
                                                    "there is none) and no deny window is open.")
    drift_while_closed: DriftWhileClosed | None = Field(
        default=None, description="Drift while closed: Correct (the default: re-applied, a hand edit is not a "
                                  "change) or Report (left and reported until the windows open).")


class ClusterProfileSpec(ApiModel):
    """Platform defaults the transform applies to the Applications that use this profile."""

    gitops_engine: GitopsEngine | None = Field(default=None, description="GitOps engine; fluxcd is the only one.")
    capabilities: dict[str, Capability] = Field(
        default_factory=dict,
        description="Defaults per capability, keyed by <traitType> or <traitType>.<scope>, "
        "for example ingress or certificate.public.",
    )
    kube_config: KubeConfigReference | None = Field(
        default=None,
        description="The kubeconfig of the cluster the profile's Applications are applied to (default: the "
        "operator's own cluster).",
    )
    allowed_namespaces: list[str] | None = Field(
        default=None,
        description="Namespaces whose Applications may use this profile (default: every namespace).",
        json_schema_extra={"items": {"type": "string", "pattern": f"^{DNS1123_LABEL_FMT}$", "maxLength": 63}},
    )
    change_windows: ChangeWindows | None = Field(
        default=None,
        description="When the changes of the profile's Applications may land (default: at any time); their own "
                    "change-window policies can only narrow these.",
    )
    health: list[HealthExpression] | None = Field(
        default=None, max_length=100,
        description="Health by expression for the profile's Applications (docs/health.md): above the shipped library, "
                    "below definitions and the Applications' own health-checks policies.",
    )


class ClusterProfileStatus(ApiModel):
    """Whether the profile's cluster can be reached, written by the operator's leader only
    (docs/multicluster.md#the-clusterprofiles-status)."""

    conditions: list[Condition] | None = Field(
        default=None,
        description="Condition Ready: True when the kubeconfig Secret connected, else False with the exact reason "
                    "(missing Secret or key, a kubeconfig that cannot be used, a cluster that does not answer).",
    )


class ClusterProfile(ApiModel):
    """Cluster-wide platform defaults for the traits of Applications."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="ClusterProfile", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: ClusterProfileSpec = Field(default_factory=ClusterProfileSpec, description="Defaults of the profile.")
    status: ClusterProfileStatus | None = Field(default=None, description="Written by the operator.")
