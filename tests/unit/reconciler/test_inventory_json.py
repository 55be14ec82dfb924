"""The inventory item JSON (docs/reconciler.md#inventory-items):
exact field names, order, omission rules, lenient reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from oam_operator.reconciler.errors import InventoryCorruptError
from oam_operator.reconciler.inventory import (
    InventoryItem,
    Phase,
    dump_inventory,
    index_items,
    load_inventory,
    sort_for_deletion,
)
from oam_operator.reconciler.objectpolicies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy
from oam_operator.reconciler.typeinfo import NameInfo, TypeInfo, TypeVersionInfo, group_matches

GO_ITEM = (
    '{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"web",'
    '"adoptionPolicy":"IfUnowned","reconcilePolicy":"OnObjectChange","updatePolicy":"SsaMerge",'
    '"deletePolicy":"Delete","applyOrder":1,"deleteOrder":1,'
    '"digest":"5f0c000000000000000000000000000000000000000000000000000000000000","phase":"Ready",'
    '"status":"Current","lastAppliedAt":"2026-03-01T10:04:05Z"}'
)


def test_round_trip_is_byte_identical() -> None:
    item = InventoryItem.from_json(json.loads(GO_ITEM))
    assert item.update_policy is UpdatePolicy.SSA_MERGE
    assert item.phase is Phase.READY
    assert item.last_applied_at == datetime(2026, 3, 1, 10, 4, 5, tzinfo=UTC)
    assert json.dumps(item.to_json(), separators=(",", ":")) == GO_ITEM


def test_field_order_and_omissions() -> None:
    item = InventoryItem.model_validate(
        {
            "group": "",
            "version": "v1",
            "kind": "Namespace",
            "name": "shop",
            "adoptionPolicy": "Always",
            "reconcilePolicy": "Once",
            "updatePolicy": "Recreate",
            "deletePolicy": "OrphanOnDelete",
            "applyOrder": -2,
            "deleteOrder": 3,
            "digest": "",
        }
    )
    out = item.to_json()
    assert list(out) == [
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
    assert out["group"] == ""
    assert out["digest"] == ""


def test_managed_types_written_when_set() -> None:
    item = InventoryItem.model_validate(
        {
            "group": "apiextensions.k8s.io",
            "version": "v1",
            "kind": "CustomResourceDefinition",
            "name": "bazs.testing.oam-operator.dev",
            "managedTypes": [{"group": "testing.oam-operator.dev", "version": "*", "kind": "Baz"}],
            "phase": "Creating",
            "status": "InProgress",
        }
    )
    out = item.to_json()
    keys = list(out)
    assert keys.index("managedTypes") == keys.index("deleteOrder") + 1
    assert keys[-2:] == ["phase", "status"]
    assert out["managedTypes"] == [{"group": "testing.oam-operator.dev", "version": "*", "kind": "Baz"}]


def test_lenient_reading() -> None:
    item = InventoryItem.from_json(
        {
            "kind": "ConfigMap",
            "name": "c",
            "unknownField": {"x": 1},
            "lastAppliedAt": "2026-03-01T12:04:05.123456+02:00",
            "applyOrder": None,
        }
    )
    assert item.group == "" and item.version == "" and item.namespace == ""
    assert item.apply_order == 0 and item.delete_order == 0
    assert item.digest == "" and item.phase is Phase.NONE and item.status == ""
    assert item.adoption_policy is AdoptionPolicy.IF_UNOWNED
    assert item.reconcile_policy is ReconcilePolicy.ON_OBJECT_CHANGE
    assert item.update_policy is UpdatePolicy.REPLACE
    assert item.delete_policy is DeletePolicy.DELETE
    assert item.last_applied_at is not None
    assert item.to_json()["lastAppliedAt"] == "2026-03-01T10:04:05Z"


def test_naive_and_offset_times_serialise_as_utc() -> None:
    item = InventoryItem.model_validate({"name": "x"})
    item.last_applied_at = datetime(2026, 1, 2, 3, 4, 5, 999999, tzinfo=timezone(timedelta(hours=-1)))
    assert item.to_json()["lastAppliedAt"] == "2026-01-02T04:04:05Z"


def test_load_and_dump() -> None:
    items = load_inventory("[" + GO_ITEM + "]")
    assert len(items) == 1
    assert json.dumps(dump_inventory(items), separators=(",", ":")) == "[" + GO_ITEM + "]"
    assert load_inventory(None) == []


def test_identity_and_key() -> None:
    item = InventoryItem.from_json(json.loads(GO_ITEM))
    assert item.key == "apps/v1, Kind=Deployment shop/web"
    assert str(item) == item.key
    assert item.identity() == ("apps", "Deployment", "shop", "web")
    assert index_items([item]) == {("apps", "Deployment", "shop", "web"): item}
    twin = item.model_copy(update={"version": "v2"})
    with pytest.raises(InventoryCorruptError) as info:
        index_items([item, twin])
    assert str(info.value) == "duplicate inventory items for apps/v2, Kind=Deployment shop/web"


def test_sort_for_deletion_is_stable() -> None:
    def item(kind: str, group: str, order: int, name: str) -> InventoryItem:
        return InventoryItem.model_validate({"group": group, "kind": kind, "name": name, "deleteOrder": order})

    items = [
        item("Namespace", "", 0, "ns"),
        item("ConfigMap", "", 0, "c1"),
        item("Deployment", "apps", 0, "d"),
        item("CustomResourceDefinition", "apiextensions.k8s.io", 0, "crd"),
        item("ConfigMap", "", -1, "c0"),
        item("ConfigMap", "", 0, "c2"),
        item("StorageClass", "storage.k8s.io", 0, "sc"),
    ]
    assert [i.name for i in sort_for_deletion(items)] == ["c0", "crd", "d", "c1", "c2", "ns", "sc"]


def test_type_matching() -> None:
    assert group_matches("*", "")
    assert group_matches("*", "apps")
    assert group_matches("*.example.com", "a.example.com")
    assert not group_matches("*.example.com", "example.com")
    assert not group_matches("a*.example.com", "ab.example.com")
    assert not group_matches("*.*", "a.b")
    assert group_matches("apps", "apps") and not group_matches("apps", "")
    assert TypeInfo("testing.oam-operator.dev", "Bar").matches("testing.oam-operator.dev", "Bar")
    assert TypeInfo("*", "*").matches("", "ConfigMap")
    assert not TypeInfo("testing.oam-operator.dev", "Bar").matches("testing.oam-operator.dev", "Foo")
    entry = TypeVersionInfo(group="g", version="*", kind="Baz")
    assert entry.matches("g", "v9", "Baz") and not entry.matches("g", "v1", "Foo")
    api = TypeVersionInfo(group="g", version="v1", kind="*")
    assert api.matches("g", "v1", "Any") and not api.matches("g", "v2", "Any")
    assert NameInfo("", "x").to_json() == {"name": "x"}
    assert NameInfo("ns", "x").to_json() == {"namespace": "ns", "name": "x"}
