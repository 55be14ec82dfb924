"""The Application kind: spec (docs/operator.md#spec-fields) and status (docs/operator.md#status-fields).

Defaults: a spec field whose default is a constant carries it as a CRD default too, so the stored
object shows the effective value; ``interval``, ``timeout``, ``adoptionPolicy`` and
``updatePolicy`` default to operator settings and therefore carry none (``None`` here = "use the
setting"); nor does ``revisionHistoryLimit``: a new CRD default would change every stored spec
on read. Duplicate component or policy names are not checked here: the API server rejects them
(list-map keys) and the transform reports them with its own messages. Every status field is
optional and omitted when unset, so a status read from the cluster is written back unchanged.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from ..common.dns1123 import DNS1123_SUBDOMAIN_FMT
from ..common.durations import CRD_DURATION_PATTERN, parse_go_duration
from ..persisted.inventory import InventoryItem
from ..persisted.objectpolicies import AdoptionPolicy, ApplicationDeletePolicy, UpdatePolicy
from .conditions import Condition, State
from .meta import (
    API_VERSION,
    API_VERSION_DESCRIPTION,
    KIND_DESCRIPTION,
    ApiModel,
    ObjectMeta,
    Timestamp,
    crd_default,
    metadata_field,
)
from .timeline import TimelineEntry

__all__ = [
    "DEFAULT_REVISION_HISTORY_LIMIT",
    "DNS1123_SUBDOMAIN_OR_EMPTY",
    "MAX_REVISION_HISTORY_LIMIT",
    "MIN_INTERVAL",
    "MIN_TIMEOUT",
    "Application",
    "ApplicationSpec",
    "ApplicationStatus",
    "BundleState",
    "BundleStatus",
    "Component",
    "DependencyStatus",
    "Policy",
    "Trait",
    "Waves",
]

MIN_INTERVAL = timedelta(seconds=30)
DEFAULT_REVISION_HISTORY_LIMIT = 10
MAX_REVISION_HISTORY_LIMIT = 100  # docs/operator.md#revision-history
MIN_TIMEOUT = timedelta(seconds=10)
INTERVAL_MESSAGE = "interval must be at least 30s"
TIMEOUT_MESSAGE = "timeout must be at least 10s"
DNS1123_SUBDOMAIN_OR_EMPTY = "^(" + DNS1123_SUBDOMAIN_FMT + ")?$"

_FREE_FORM = {"x-kubernetes-preserve-unknown-fields": True}


class Trait(ApiModel):
    """A trait attached to a component: an operational feature such as scaling or ingress."""

    type: str = Field(min_length=1, description="Trait type, for example scaler, ingress or env.")
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="Type-specific properties; validated by the operator against the trait type's schema.",
        json_schema_extra={**_FREE_FORM, **crd_default({})},
    )


class Component(ApiModel):
    """A part of the Application that the operator turns into Kubernetes objects."""

    name: str = Field(min_length=1, max_length=253, description="Name of the component, unique within the Application.")
    type: str = Field(min_length=1, description="Component type, for example webservice, worker or manifests.")
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="Type-specific properties; validated by the operator against the component type's schema.",
        json_schema_extra={**_FREE_FORM, **crd_default({})},
    )
    traits: list[Trait] = Field(
        default_factory=list,
        max_length=64,
        description="Traits of the component, applied in order; at most 64.",
        json_schema_extra={"x-kubernetes-list-type": "atomic", **crd_default([])},
    )
    annotations: dict[str, str] | None = Field(
        default=None,
        description="Annotations of the component, for example <domain>/tier: infra, services or apps "
        "to place it in an ordered group.",
    )


class Policy(ApiModel):
    """An application-wide policy such as dependency (ordering) or placement."""

    name: str = Field(min_length=1, max_length=253, description="Name of the policy, unique within the Application.")
    type: str = Field(min_length=1, description="Policy type, for example dependency or placement.")
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="Type-specific properties; validated by the operator against the policy type's schema.",
        json_schema_extra={**_FREE_FORM, **crd_default({})},
    )


def _duration_rule(minimum: str, message: str) -> dict[str, Any]:
    return {"x-kubernetes-validations": [{"rule": f"duration(self) >= duration('{minimum}')", "message": message}]}


class DriftPolicy(StrEnum):
    """What the operator does with drift of its objects (docs/operator.md#drift)."""

    CORRECT = "Correct"
    REPORT = "Report"


class ApplicationSpec(ApiModel):
    """Desired state of the Application: its components, policies and how the operator applies them."""

    components: list[Component] = Field(
        min_length=1,
        max_length=1000,
        description="Components of the Application (1 to 1000), keyed by name.",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    )
    policies: list[Policy] = Field(
        default_factory=list,
        max_length=100,
        description="Policies of the Application (at most 100), keyed by name.",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], **crd_default([])},
    )
    profile: str = Field(
        default="",
        max_length=253,
        description="Name of the ClusterProfile to use; empty for the operator's default profile.",
        json_schema_extra=crd_default(""),
    )
    service_account_name: str = Field(
        default="",
        max_length=253,
        pattern=DNS1123_SUBDOMAIN_OR_EMPTY,
        description="ServiceAccount of the Application's namespace the operator impersonates to apply "
        "the objects; empty for the operator's default.",
        json_schema_extra=crd_default(""),
    )
    suspend: bool = Field(
        default=False,
        description="Stop reconciling the Application; deletion still proceeds.",
        json_schema_extra=crd_default(False),
    )
    interval: str | None = Field(
        default=None,
        pattern=CRD_DURATION_PATTERN,
        description="How often a Ready Application is checked for drift, as a duration such as 10m "
        "(at least 30s); unset for the operator's default.",
        json_schema_extra=_duration_rule("30s", INTERVAL_MESSAGE),
    )
    timeout: str | None = Field(
        default=None,
        pattern=CRD_DURATION_PATTERN,
        description="How long processing may take before the Application is reported as timed out, as a "
        "duration such as 10m (at least 10s); unset for the operator's default.",
        json_schema_extra=_duration_rule("10s", TIMEOUT_MESSAGE),
    )
    adoption_policy: AdoptionPolicy | None = Field(
        default=None,
        description="Default adoption policy of the objects (Never, IfUnowned or Always); unset for the "
        "operator's default.",
    )
    update_policy: UpdatePolicy | None = Field(
        default=None,
        description="Default update policy of the objects (Replace, SsaMerge, SsaOverride or Recreate); unset "
        "for the operator's default.",
    )
    drift: DriftPolicy | None = Field(
        default=None,
        description="What the operator does when another field manager changes a field the Application sets, "
        "or deletes one of its objects: Correct (re-apply within seconds; the default when unset) or Report "
        "(leave the change and show it in status.drift).",
    )
    revision_history_limit: int | None = Field(
        default=None,
        ge=0,
        le=MAX_REVISION_HISTORY_LIMIT,
        description="How many revisions (ControllerRevisions of the applied spec) are kept for history and "
        f"rollback, 0 to {MAX_REVISION_HISTORY_LIMIT}; the oldest are pruned; unset for "
        f"{DEFAULT_REVISION_HISTORY_LIMIT}.",
        json_schema_extra={"format": "int32"},
    )
    delete_policy: ApplicationDeletePolicy = Field(
        default=ApplicationDeletePolicy.DELETE,
        description="Default delete policy of the objects: Delete, or Orphan to keep every object when the "
        "Application is deleted.",
        json_schema_extra=crd_default(ApplicationDeletePolicy.DELETE.value),
    )

    @field_validator("interval")
    @classmethod
    def _interval_minimum(cls, value: str | None) -> str | None:
        if value is not None and parse_go_duration(value) < MIN_INTERVAL:
            raise ValueError(INTERVAL_MESSAGE)
        return value

    @field_validator("timeout")
    @classmethod
    def _timeout_minimum(cls, value: str | None) -> str | None:
        if value is not None and parse_go_duration(value) < MIN_TIMEOUT:
            raise ValueError(TIMEOUT_MESSAGE)
        return value

    def interval_or(self, default: timedelta) -> timedelta:
        """The effective interval: the spec's, else ``default`` (the operator setting)."""
        return parse_go_duration(self.interval) if self.interval is not None else default

    def timeout_or(self, default: timedelta) -> timedelta:
        """The effective timeout: the spec's, else ``default`` (the operator setting)."""
        return parse_go_duration(self.timeout) if self.timeout is not None else default


class Waves(ApiModel):
    """Range of apply waves of a bundle."""

    first: int = Field(description="First apply wave of the bundle.")
    last: int = Field(description="Last apply wave of the bundle.")


class BundleState(StrEnum):
    """State of a bundle."""

    PENDING = "Pending"
    APPLYING = "Applying"
    READY = "Ready"


class BundleStatus(ApiModel):
    """Progress of one bundle (an ordered group of objects), in apply order."""

    name: str = Field(description="Name of the bundle.")
    depends_on: list[str] = Field(default_factory=list, description="Bundles that must be ready first.")
    objects: int = Field(default=0, ge=0, description="Number of desired objects of the bundle.")
    ready: int = Field(default=0, ge=0, description="Number of ready objects of the bundle.")
    state: BundleState = Field(
        default=BundleState.PENDING, description="Pending, Applying (every earlier bundle is ready) or Ready."
    )
    waves: Waves | None = Field(default=None, description="Apply waves of the bundle's objects.")


class DependencyStatus(ApiModel):
    """An Application this one depends on (app-dependency policy), as its last pass saw it."""

    namespace: str = Field(description="Namespace of the Application depended on.")
    name: str = Field(description="Name of the Application depended on.")
    state: str = Field(
        description="Its state (Ready, Processing, …), Missing when it does not exist, Deleting, or "
        "'Ready at generation <g> of <n>' while its current spec is not applied yet."
    )
    ready: bool = Field(description="Ready at its current generation.")


class ClusterStatus(ApiModel):
    """One cluster of an Application with a topology policy, as its last pass saw its cluster
    Application (docs/multicluster.md#topology)."""

    name: str = Field(description="The ClusterProfile.")
    application: str = Field(description="The cluster Application that delivers to it, in the same namespace.")
    state: str = Field(description="Its state (Ready, Processing, Error, …); Pending before it is created.")
    message: str | None = Field(default=None, description="Its status summary.")
    revision: int | None = Field(default=None, description="Its revision.", json_schema_extra={"format": "int64"})
    objects: int | None = Field(default=None, description="Number of objects in its inventory.")
    ready_objects: int | None = Field(default=None, description="Number of them ready or completed.")
    fleet_revision: int | None = Field(
        default=None, description="The revision of this Application its cluster Application carries.",
        json_schema_extra={"format": "int64"})
    ready_revision: int | None = Field(
        default=None, description="The revision of this Application last Ready on the cluster (what a halted "
        "rollout reverts to).", json_schema_extra={"format": "int64"})


class RolledBackStatus(ApiModel):
    """A revision a rollback policy rolled back (docs/operator.md#automatic-rollback)."""

    revision: int = Field(description="The revision that failed.", json_schema_extra={"format": "int64"})
    digest: str = Field(description="Digest of its spec: while the spec has it, the restored revision is applied.")
    restores: int = Field(description="The Ready revision it was rolled back to.",
                          json_schema_extra={"format": "int64"})
    object: str | None = Field(default=None, description="The object that blocked it, as kind and name.")
    message: str = Field(description="Why it failed, as the RolledBack condition says it.")
    at: Timestamp = Field(description="When it was rolled back.")


class RolloutStatus(ApiModel):
    """Where a rollout policy's rollout stands (docs/multicluster.md#rollout)."""

    revision: int = Field(description="The revision rolling out.", json_schema_extra={"format": "int64"})
    groups: int = Field(description="Number of groups the clusters take it in.")
    halted: str | None = Field(default=None,
                               description="The cluster whose failure halted it; absent while it goes on.")
    message: str | None = Field(default=None, description="What halted it: the failed cluster's summary.")
    actions: list[str] | None = Field(
        default=None, description="What the halt did to the clusters that took the revision (reverted, or kept and "
        "why), as the Ready message says it.")


class DriftStatus(ApiModel):
    """An object of the Application another field manager changed or deleted, as the last pass saw it."""

    api_version: str = Field(description="apiVersion of the object.")
    kind: str = Field(description="Kind of the object.")
    namespace: str | None = Field(default=None, description="Namespace of the object; absent if cluster-scoped.")
    name: str = Field(description="Name of the object.")
    fields: list[str] | None = Field(
        default=None,
        description="Paths of the fields the Application sets that another manager took "
        "(spec.template.spec.containers[name=web].image); absent when the object was deleted.",
    )
    deleted: bool | None = Field(default=None, description="True when the object was deleted (it is re-created).")
    held_until: Timestamp | None = Field(
        default=None,
        description="Set while correction waits: the object kept drifting right after each correction "
        "(a fight with another controller); corrected again after this time.",
    )


class HookStatus(ApiModel):
    """The last run of one lifecycle hook, recorded before its object is created (docs/operator.md#lifecycle-hooks)."""

    phase: str = Field(description="PreApply, PostReady, OnFailure, PreDelete or PostDelete.")
    api_version: str = Field(description="apiVersion of the hook's object.")
    kind: str = Field(description="Kind of the hook's object.")
    namespace: str | None = Field(default=None, description="Namespace of the object; absent if cluster-scoped.")
    name: str = Field(description="Name of the object.")
    run: str = Field(description="Which run: r<revision> in the apply branch, delete in the delete branch.")
    state: str = Field(description="Recorded (its create may have been sent), Running, Succeeded or Failed.")
    delete_policy: str = Field(description="BeforeNextRun, OnSuccess or Never.")
    timeout: str = Field(description="How long it may run, a Go duration.")
    message: str | None = Field(default=None, description="Why it failed.")
    started_at: Timestamp | None = Field(default=None, description="When it was recorded (its timeout's basis).")


class CompactInventory(ApiModel):
    """The inventory, compactly (``oam_operator.api.compact_inventory``); ``oam-operator status NAME
    -o inventory`` prints it in component-operator-runtime's shape."""

    format: int = Field(default=1, description="Encoding version (1).")
    since: Timestamp | None = Field(default=None, description="Base of the lastAppliedAt offsets of the entries.")
    types: list[str] = Field(default_factory=list, description="group/version/kind of the entries' types.")
    policies: list[str] = Field(
        default_factory=list, description="adoption/reconcile/update/delete policy combinations of the entries."
    )
    entries: list[str] = Field(
        default_factory=list,
        description="One object each: type index, namespace (- if cluster-scoped), name, policy index, "
        "applyOrder,deleteOrder, digest, phase and status codes, lastAppliedAt offset (base 36), options.",
    )


class ApplicationStatus(ApiModel):
    """Observed state of the Application, written by the operator only."""

    observed_generation: int | None = Field(
        default=None, description="metadata.generation seen by the last pass.", json_schema_extra={"format": "int64"}
    )
    state: State | None = Field(
        default=None,
        description="Coarse state: Ready, Pending, Processing, Waiting, DeletionPending, Deleting or Error.",
    )
    conditions: list[Condition] | None = Field(
        default=None,
        description="Conditions Ready (always), Reconciling, Stalled and Drifted (only while True), "
        "kstatus-compatible.",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
    )
    summary: str | None = Field(
        default=None,
        description="The Ready message shortened to one line (Suspended while suspended); kubectl's STATUS column.",
    )
    objects: int | None = Field(default=None, description="Number of objects in the inventory.")
    ready_objects: int | None = Field(default=None, description="Number of ready or completed objects.")
    bundles: list[BundleStatus] | None = Field(default=None, description="Progress of each bundle, in apply order.")
    inventory: list[InventoryItem] | None = Field(
        default=None, description="Every object the operator manages for the Application (its memory)."
    )
    compact_inventory: CompactInventory | None = Field(
        default=None,
        description="The inventory in the compact encoding the operator writes (about 75 bytes per object); "
        "read status.inventory only when this is absent.",
    )
    profile: str | None = Field(default=None, description='ClusterProfile used by the last pass ("" for none).')
    clusters: list[ClusterStatus] | None = Field(
        default=None,
        description="With a topology policy: each selected cluster, by ClusterProfile name; absent without one.",
    )
    cluster_summary: str | None = Field(
        default=None, description="With a topology policy: <ready>/<selected> clusters; kubectl's CLUSTERS column."
    )
    rollout: RolloutStatus | None = Field(default=None, description="With a rollout policy: where it stands.")
    rolled_back: RolledBackStatus | None = Field(
        default=None, description="With a rollback policy: the failed revision it rolled back, until the spec changes.")
    cluster: str | None = Field(
        default=None,
        description="Id of the remote cluster the inventory's objects are on (absent: the operator's own "
        "cluster); see docs/multicluster.md.",
    )
    applied_generation: int | None = Field(
        default=None,
        description="Generation of the last pass that reached Ready.",
        json_schema_extra={"format": "int64"},
    )
    last_applied_at: Timestamp | None = Field(
        default=None, description="When the Application last became Ready after applying a new revision."
    )
    processing_digest: str | None = Field(default=None, description="Digest of the inputs being processed.")
    processing_since: Timestamp | None = Field(
        default=None, description="Start of the current processing; the basis of the timeout."
    )
    last_processing_digest: str | None = Field(default=None, description="Digest counted by revision.")
    revision_digest: str | None = Field(
        default=None,
        description="Digest of the revision processed (without the generation); processingDigest and "
        "lastProcessingDigest then keep the previous release's form, so a downgrade restarts nothing.",
    )
    revision: int | None = Field(
        default=None,
        description="1 after the first successful apply, incremented for every newly processed input.",
        json_schema_extra={"format": "int64"},
    )
    last_handled_reconcile_at: str | None = Field(
        default=None, description="Last handled value of the <domain>/requested-at annotation."
    )
    timeline: list[TimelineEntry] | None = Field(
        default=None,
        description="Per revision (the last 5), when each wave and the objects gating it became Ready; "
        "oam-operator explain prints its critical path.")
    dependencies: list[DependencyStatus] | None = Field(
        default=None,
        description="Applications this one depends on (app-dependency policies) and their states, in policy "
        "order; absent when it depends on none.",
    )
    hooks: list[HookStatus] | None = Field(
        default=None, description="The last run of each lifecycle hook, recorded before its object is created.")
    drift: list[DriftStatus] | None = Field(
        default=None,
        description="Objects that drifted and are not corrected (spec.drift Report, or correction held back); "
        "absent when none.",
    )


class Application(ApiModel):
    """An OAM-style application: components with traits and policies, deployed in ordered waves."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="Application", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: ApplicationSpec = Field(description="Desired state of the Application.")
    status: ApplicationStatus | None = Field(default=None, description="Observed state of the Application.")
