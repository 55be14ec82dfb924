"""Owned field sets (controller/service/fieldsets.py): paths of a ``fieldsV1`` tree and what a change
took from the operator's manager. The API server's side of it is tested in
tests/integration/reconciler/test_owned_fields.py."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.fieldsets import FieldSet, manager_fields, paths, removed

OURS = {
    "f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}},
    "f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {},
                             "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}},
    }}}},
}


def entry(manager: str, fields: dict[str, Any], operation: str = "Apply") -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields}


def test_paths_name_fields_list_items_by_key_and_owned_items() -> None:
    assert sorted(paths(OURS)) == [
        ".metadata.labels.app",
        ".metadata.labels.tier",
        '.spec.template.spec.containers[name=web]',
        ".spec.template.spec.containers[name=web].image",
        ".spec.template.spec.containers[name=web].name",
        ".spec.template.spec.containers[name=web].ports[containerPort=80,protocol=TCP]",
        ".spec.template.spec.containers[name=web].ports[containerPort=80,protocol=TCP].containerPort",
    ]
    assert list(paths({"f:spec": {"f:args": {'v:"--verbose"': {}, "i:0": {}}}})) == [
        '.spec.args["--verbose"]', ".spec.args[0]"]


def test_what_another_manager_took_is_named() -> None:
    taken = {"f:metadata": {"f:labels": {"f:app": {}}},
             "f:spec": {"f:template": {"f:spec": {"f:containers": {
                 'k:{"name":"web"}': {".": {}, "f:name": {},
                                      "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                                          ".": {}, "f:containerPort": {}}}}}}}}}
    assert removed(FieldSet.of(OURS), FieldSet.of(taken)) == [
        "metadata.labels.tier", "spec.template.spec.containers[name=web].image"]
    assert removed(FieldSet.of(OURS), FieldSet.of(OURS)) == []
    assert removed(FieldSet.of(OURS), None)[:2] == ["metadata.labels.app", "metadata.labels.tier"]
    grown = {**OURS, "f:data": {"f:extra": {}}}
    assert removed(FieldSet.of(OURS), FieldSet.of(grown)) == []  # more is no loss


def test_only_the_managers_apply_entries_count() -> None:
    obj = {"metadata": {"managedFields": [
        entry("oam-operator.dev", {"f:metadata": {"f:labels": {"f:app": {}}}}),
        entry("oam-operator.dev", {"f:spec": {"f:replicas": {}}}, operation="Update"),
        entry("kubectl-edit", {"f:spec": {"f:paused": {}}}, operation="Update"),
        entry("oam-operator.dev", {"f:metadata": {"f:labels": {"f:tier": {}}}}),
    ]}}
    mine = manager_fields(obj, "oam-operator.dev")
    assert mine is not None
    assert sorted(paths(mine.fields)) == [".metadata.labels.app", ".metadata.labels.tier"]
    assert manager_fields(obj, "someone-else") is None
    assert manager_fields({"metadata": {}}, "oam-operator.dev") is None


def test_a_set_is_kept_small_and_compares_by_its_bytes() -> None:
    big = {"f:spec": {f"f:field{i}": {} for i in range(200)}}
    packed = FieldSet.of(big)
    assert len(packed) < len(str(big)) / 4
    assert FieldSet.of(dict(reversed(list(big["f:spec"].items())))) != packed  # a different tree
    assert FieldSet.of({"f:spec": dict(reversed(list(big["f:spec"].items())))}) == packed  # the same tree
    assert packed.fields == big and not packed.empty and FieldSet.of({}).empty
