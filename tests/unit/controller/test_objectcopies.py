"""The copies the watch answers the reconciler's reads with (controller/service/objectcopies.py,
docs/operator.md#reads-from-the-watch): what a copy keeps, and the order of resourceVersions."""

from __future__ import annotations

from oam_operator.controller.service.objectcopies import compact_copy, expand, is_older, resource_version

CONFIGMAP = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "shop", "resourceVersion": "17", "labels": {"a": "b"},
                 "annotations": {"oam-operator.dev/digest": "d1",
                                 "kubectl.kubernetes.io/last-applied-configuration": "{...}"},
                 "managedFields": [{"manager": "oam-operator.dev", "operation": "Apply", "fieldsV1": {}}]},
    "data": {"big": "x" * 10_000},
    "binaryData": {"blob": "eA=="},
}


def test_a_copy_keeps_metadata_spec_and_status_without_managed_fields_content_or_last_applied() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "generation": 2},
                  "spec": {"replicas": 3}, "status": {"observedGeneration": 2}}
    assert expand(compact_copy(deployment)) == deployment
    assert expand(compact_copy(CONFIGMAP)) == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop", "resourceVersion": "17", "labels": {"a": "b"},
                     "annotations": {"oam-operator.dev/digest": "d1"}},
    }
    assert len(compact_copy(CONFIGMAP)) < 200  # the 10 kB of data are not kept


def test_a_copy_leaves_the_object_it_was_made_from_alone_and_each_expansion_is_fresh() -> None:
    copy = compact_copy(CONFIGMAP)
    assert "managedFields" in CONFIGMAP["metadata"]  # type: ignore[operator]
    first = expand(copy)
    first["metadata"]["name"] = "changed"
    assert expand(copy)["metadata"]["name"] == "settings"


def test_resource_versions_compare_as_integers_and_opaque_ones_are_never_older() -> None:
    assert resource_version(CONFIGMAP) == "17"
    assert resource_version({"metadata": {}}) == ""
    assert is_older("9", "17")  # not "9" > "17" as strings
    assert not is_older("17", "17")
    assert not is_older("18", "17")
    assert not is_older("", "17")
    assert not is_older("abc", "17")
    assert not is_older("9", "")
