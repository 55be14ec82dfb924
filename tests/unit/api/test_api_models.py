"""The CRD models: round trips, defaults, validation, the inventory item JSON
(docs/reconciler.md#inventory-items)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from oam_operator.api import (
    AdoptionPolicy,
    Application,
    ApplicationDeletePolicy,
    ApplicationSpec,
    ApplicationStatus,
    BundleState,
    ClusterProfile,
    Component,
    ConditionStatus,
    DeletePolicy,
    GitopsEngine,
    InventoryItem,
    Phase,
    ReconcilePolicy,
    State,
    UpdatePolicy,
)
from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.persisted.inventory import INVENTORY_FIELDS

# An Application as the API server returns it: CRD defaults applied, status written by the operator.
APPLICATION: dict[str, Any] = {
    "apiVersion": "oam-operator.dev/v1alpha1",
    "kind": "Application",
    "metadata": {
        "name": "shop",
        "namespace": "shop",
        "uid": "5b0b6d4e-3f6c-4a57-9a43-0f4a3b5c6d7e",
        "generation": 3,
        "resourceVersion": "4711",
        "creationTimestamp": "2026-03-01T10:00:00Z",
        "annotations": {"oam-operator.dev/requested-at": "2026-03-01T10:03:00Z"},
        "finalizers": ["oam-operator.dev"],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "time": "2026-03-01T10:00:00Z"}],
    },
    "spec": {
        "components": [
            {
                "name": "db",
                "type": "postgresql",
                "annotations": {"oam-operator.dev/tier": "infra"},
                "properties": {"version": "16", "storageSize": "10Gi"},
                "traits": [],
            },
            {
                "name": "web",
                "type": "webservice",
                "properties": {
                    "image": "ghcr.io/example/web:1.4.2",
                    "port": 8080,
                    "env": [{"name": "A", "value": None}],
                },
                "traits": [{"type": "scaler", "properties": {"minReplicas": 2, "maxReplicas": 5}}],
            },
        ],
        "policies": [
            {
                "name": "order",
                "type": "dependency",
                "properties": {"rules": [{"component": "web", "dependsOn": ["db"]}]},
            }
        ],
        "profile": "",
        "serviceAccountName": "shop-deployer",
        "suspend": False,
        "interval": "10m",
        "timeout": "15m",
        "adoptionPolicy": "IfUnowned",
        "updatePolicy": "SsaMerge",
        "deletePolicy": "Delete",
    },
    "status": {
        "observedGeneration": 3,
        "state": "Ready",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "observedGeneration": 3,
                "lastTransitionTime": "2026-03-01T10:04:05Z",
                "reason": "Ready",
                "message": "Applied revision 2: 2 objects ready",
            }
        ],
        "objects": 2,
        "readyObjects": 2,
        "bundles": [
            {"name": "shop", "dependsOn": [], "objects": 0, "ready": 0, "state": "Ready"},
            {
                "name": "shop-00",
                "dependsOn": [],
                "objects": 1,
                "ready": 1,
                "state": "Ready",
                "waves": {"first": 0, "last": 0},
            },
            {
                "name": "shop-01",
                "dependsOn": ["shop-00"],
                "objects": 1,
                "ready": 1,
                "state": "Ready",
                "waves": {"first": 1, "last": 1},
            },
        ],
        "inventory": [
            {
                "group": "apps",
                "version": "v1",
                "kind": "StatefulSet",
                "namespace": "shop",
                "name": "db",
                "adoptionPolicy": "IfUnowned",
                "reconcilePolicy": "OnObjectChange",
                "updatePolicy": "SsaMerge",
                "deletePolicy": "Delete",
                "applyOrder": 0,
                "deleteOrder": 1,
                "digest": "1" * 64,
                "phase": "Ready",
                "status": "Current",
                "lastAppliedAt": "2026-03-01T10:04:05Z",
            },
            {
                "group": "apps",
                "version": "v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "web",
                "adoptionPolicy": "IfUnowned",
                "reconcilePolicy": "OnObjectChange",
                "updatePolicy": "SsaMerge",
                "deletePolicy": "Delete",
                "applyOrder": 1,
                "deleteOrder": 0,
                "digest": "2" * 64,
                "phase": "Ready",
                "status": "Current",
                "lastAppliedAt": "2026-03-01T10:04:05Z",
            },
        ],
        "profile": "",
        "appliedGeneration": 3,
        "lastAppliedAt": "2026-03-01T10:04:05Z",
        "processingDigest": "3" * 64,
        "lastProcessingDigest": "3" * 64,
        "revision": 2,
        "lastHandledReconcileAt": "2026-03-01T10:03:00Z",
    },
}

# The example of docs/reconciler.md#inventory-items, with a full digest.
ITEM_JSON = (
    '{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"web",'
    '"adoptionPolicy":"IfUnowned","reconcilePolicy":"OnObjectChange","updatePolicy":"SsaMerge",'
    '"deletePolicy":"Delete","applyOrder":1,"deleteOrder":1,'
    '"digest":"' + "5f0c" * 16 + '","phase":"Ready","status":"Current",'
    '"lastAppliedAt":"2026-03-01T10:04:05Z"}'
)


def test_application_round_trips() -> None:
    model = Application.model_validate(APPLICATION)
    assert model.to_json() == APPLICATION
    assert Application.model_validate(model.to_json()) == model
    assert model.metadata.generation == 3
    assert model.metadata.annotations == {"oam-operator.dev/requested-at": "2026-03-01T10:03:00Z"}
    assert model.metadata.creation_timestamp == datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    spec = model.spec
    assert [c.name for c in spec.components] == ["db", "web"]
    assert spec.components[1].traits[0].properties == {"minReplicas": 2, "maxReplicas": 5}
    assert spec.adoption_policy is AdoptionPolicy.IF_UNOWNED and spec.update_policy is UpdatePolicy.SSA_MERGE
    assert spec.interval_or(timedelta(minutes=1)) == timedelta(minutes=10)
    status = model.status
    assert status is not None and status.state is State.READY
    assert status.conditions is not None and status.conditions[0].status is ConditionStatus.TRUE
    assert status.bundles is not None and status.bundles[2].state is BundleState.READY
    assert status.bundles[2].depends_on == ["shop-00"] and status.bundles[0].waves is None
    assert status.inventory is not None and status.inventory[1].phase is Phase.READY


def test_json_text_round_trips_through_pydantic_json() -> None:
    text = json.dumps(APPLICATION)
    model = Application.model_validate_json(text)
    assert json.loads(model.model_dump_json(by_alias=True, exclude_none=True)) == APPLICATION


def test_spec_defaults_follow_the_crd() -> None:
    spec = ApplicationSpec.model_validate({"components": [{"name": "web", "type": "webservice"}]})
    assert spec.to_json() == {
        "components": [{"name": "web", "type": "webservice", "properties": {}, "traits": []}],
        "policies": [],
        "profile": "",
        "serviceAccountName": "",
        "suspend": False,
        "deletePolicy": "Delete",
    }
    assert spec.interval is None and spec.timeout is None
    assert spec.adoption_policy is None and spec.update_policy is None
    assert spec.delete_policy is ApplicationDeletePolicy.DELETE
    assert spec.interval_or(timedelta(minutes=10)) == timedelta(minutes=10)
    assert spec.timeout_or(timedelta(minutes=3)) == timedelta(minutes=3)


def test_python_names_are_accepted() -> None:
    spec = ApplicationSpec(
        components=[Component(name="web", type="webservice")],
        service_account_name="sa",
        delete_policy=ApplicationDeletePolicy.ORPHAN,
    )
    assert spec.to_json()["serviceAccountName"] == "sa"
    assert spec.to_json()["deletePolicy"] == "Orphan"


def _spec(**fields: Any) -> dict[str, Any]:
    return {"components": [{"name": "web", "type": "webservice"}], **fields}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"interval": "10s"}, "interval must be at least 30s"),
        ({"interval": "29999ms"}, "interval must be at least 30s"),
        ({"timeout": "9.5s"}, "timeout must be at least 10s"),
        ({"interval": "10 m"}, "String should match pattern"),
        ({"interval": "-1h"}, "String should match pattern"),
        ({"timeout": "1d"}, "String should match pattern"),
        ({"components": []}, "List should have at least 1 item"),
        ({"components": [{"name": "", "type": "x"}]}, "String should have at least 1 character"),
        ({"components": [{"name": "a", "type": "x", "traits": [{"type": "t"}] * 65}]}, "at most 64 items"),
        ({"policies": [{"name": "p", "type": "x"}] * 101}, "at most 100 items"),
        ({"serviceAccountName": "Bad_Name"}, "String should match pattern"),
        ({"deletePolicy": "OrphanOnDelete"}, "Input should be 'Delete' or 'Orphan'"),
        ({"profile": "p" * 254}, "at most 253 characters"),
    ],
)
def test_spec_validation_mirrors_the_crd(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ApplicationSpec.model_validate(_spec(**fields))


@pytest.mark.parametrize(("interval", "timeout"), [("30s", "10s"), ("0.5m", "10000ms"), ("1h30m", "1.5h")])
def test_minimum_durations_are_accepted(interval: str, timeout: str) -> None:
    spec = ApplicationSpec.model_validate(_spec(interval=interval, timeout=timeout))
    assert spec.interval_or(timedelta(0)) >= timedelta(seconds=30)
    assert spec.timeout_or(timedelta(0)) >= timedelta(seconds=10)


def test_unknown_fields_are_ignored_and_duplicates_left_to_the_transform() -> None:
    spec = ApplicationSpec.model_validate(
        _spec(unknown=1, components=[{"name": "a", "type": "x", "bogus": True}, {"name": "a", "type": "y"}])
    )
    assert [c.type for c in spec.components] == ["x", "y"]
    assert "unknown" not in spec.to_json()


def test_status_omits_unset_fields_and_writes_timestamps_canonically() -> None:
    assert ApplicationStatus().to_json() == {}
    status = ApplicationStatus.model_validate(
        {"observedGeneration": 1, "processingSince": "2026-03-01T11:04:05.123456+01:00", "profile": ""}
    )
    assert status.to_json() == {"observedGeneration": 1, "processingSince": "2026-03-01T10:04:05Z", "profile": ""}
    assert status.processing_since == datetime(2026, 3, 1, 10, 4, 5, 123456, tzinfo=UTC)


def test_status_rejects_unknown_states() -> None:
    with pytest.raises(ValidationError):
        ApplicationStatus.model_validate({"state": "Done"})


# -- inventory item (docs/reconciler.md#inventory-items) --


def test_inventory_item_serialises_exactly_like_the_go_implementation() -> None:
    item = InventoryItem.model_validate_json(ITEM_JSON)
    assert json.dumps(item.to_json(), separators=(",", ":")) == ITEM_JSON
    assert item.model_dump_json(by_alias=True) == ITEM_JSON
    assert list(InventoryItem.model_validate({}).to_json()) == [
        "group",
        "version",
        "kind",
        "name",
        "adoptionPolicy",
        "reconcilePolicy",
        "updatePolicy",
        "deletePolicy",
        "applyOrder",
        "deleteOrder",
        "digest",
    ]


def test_inventory_fields_are_the_specified_ones_in_order() -> None:
    aliases = [field.alias for field in InventoryItem.model_fields.values()]
    assert tuple(aliases) == INVENTORY_FIELDS
    full = InventoryItem(
        namespace="ns",
        managed_types=[{"group": "example.com", "version": "*", "kind": "Widget"}],  # type: ignore[list-item]
        phase=Phase.CREATING,
        status=ObjectStatus.IN_PROGRESS,
        last_applied_at=datetime(2026, 3, 1, tzinfo=UTC),
        adopted=True,
    )
    assert tuple(full.to_json()) == INVENTORY_FIELDS


def test_inventory_item_omission_rules() -> None:
    item = InventoryItem(group="", version="v1", kind="ConfigMap", name="c", digest="")
    data = item.to_json()
    assert data["group"] == "" and data["digest"] == ""
    assert not {"namespace", "managedTypes", "phase", "status", "lastAppliedAt"} & set(data)
    python = item.model_dump()
    assert "managed_types" not in python and "namespace" not in python and python["group"] == ""


def test_inventory_item_reading_is_lenient() -> None:
    item = InventoryItem.model_validate(
        {
            "kind": "Secret",
            "name": "s",
            "unknownField": {"x": 1},
            "phase": "",
            "status": "",
            "lastAppliedAt": "2026-03-01T12:04:05.5+02:00",
            "applyOrder": None,
        }
    )
    assert (item.group, item.version, item.namespace, item.digest) == ("", "", "", "")
    assert (item.apply_order, item.delete_order) == (0, 0)
    # One definition (persisted.inventory): unset is Go's zero value, as the reconciler reads it.
    assert item.phase is Phase.NONE and item.status == ""
    assert item.adoption_policy is AdoptionPolicy.IF_UNOWNED
    assert item.reconcile_policy is ReconcilePolicy.ON_OBJECT_CHANGE
    assert item.update_policy is UpdatePolicy.REPLACE
    assert item.delete_policy is DeletePolicy.DELETE
    assert item.to_json()["lastAppliedAt"] == "2026-03-01T10:04:05Z"


def test_inventory_item_managed_types_round_trip() -> None:
    data = json.loads(ITEM_JSON)
    data.update(group="apiextensions.k8s.io", kind="CustomResourceDefinition", name="widgets.example.com")
    del data["namespace"]
    data_with_types = copy.deepcopy(data)
    data_with_types["managedTypes"] = [{"group": "example.com", "version": "*", "kind": "Widget"}]
    ordered = {k: data_with_types[k] for k in INVENTORY_FIELDS if k in data_with_types}
    item = InventoryItem.model_validate(data_with_types)
    assert json.dumps(item.to_json()) == json.dumps(ordered)


# -- ClusterProfile --


def test_cluster_profile_round_trips() -> None:
    body = {
        "apiVersion": "oam-operator.dev/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "default"},
        "spec": {
            "gitopsEngine": "fluxcd",
            "capabilities": {
                "ingress": {"rendering": {"className": "nginx"}},
                "certificate.public": {"rendering": {"issuer": "letsencrypt"}},
            },
        },
    }
    model = ClusterProfile.model_validate(body)
    assert model.spec.gitops_engine is GitopsEngine.FLUXCD
    assert model.spec.capabilities["ingress"].rendering == {"className": "nginx"}
    assert model.to_json() == body


def test_empty_cluster_profile() -> None:
    model = ClusterProfile.model_validate({"metadata": {"name": "default"}, "spec": {}})
    assert model.spec.gitops_engine is None and model.spec.capabilities == {}
    assert ClusterProfile.model_validate({"metadata": {"name": "x"}}).spec.capabilities == {}
    with pytest.raises(ValidationError):
        ClusterProfile.model_validate({"spec": {"gitopsEngine": "argocd"}})
