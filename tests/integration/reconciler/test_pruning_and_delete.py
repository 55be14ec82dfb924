"""Redundant objects during apply(), delete() and is_deletion_allowed()
(docs/reconciler.md#pruning, docs/reconciler.md#deletion, docs/reconciler.md#deletion-checks)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import (
    DIGEST_KEY,
    GROUP,
    NAME,
    OWNER_KEY,
    HarnessFactory,
    Kube,
    configmap,
    custom,
    secret,
)

from oam_operator.reconciler.errors import InstancesExistError
from oam_operator.reconciler.identity import hash_owner_id

CRD_API = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"


def five_objects() -> list[dict[str, Any]]:
    return [
        configmap("c1", delete_policy="Orphan", delete_order="2"),
        configmap("c2", delete_policy="orphan-on-apply", delete_order="2"),
        configmap("c3", delete_policy="OrphanOnDelete", delete_order="2"),
        secret("s", delete_order="1"),
        custom("Foo", "f", finalizer=True, delete_order="0"),
    ]


def assert_released(kube: Kube, namespace: str, name: str) -> None:
    live = kube.get("v1", "ConfigMap", name, namespace)
    assert live is not None
    assert OWNER_KEY not in (live["metadata"].get("labels") or {})
    assert OWNER_KEY not in (live["metadata"].get("annotations") or {})
    assert DIGEST_KEY not in (live["metadata"].get("annotations") or {})


def ready_five(h: Any, kube: Kube, namespace: str) -> list[dict[str, Any]]:
    objects = five_objects()
    h.apply(objects)
    h.apply(objects)
    kube.observe("Foo", "f", namespace)
    assert h.apply(objects) is True
    return objects


def test_delete_orders_and_orphan_policies_during_apply(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    objects = ready_five(h, kube, namespace)
    keep = [objects[3]]
    sfd = "ScheduledForDeletion"
    assert h.apply(keep) is False
    assert h.phases() == {"f": "Deleting", "s": "Ready", "c1": sfd, "c2": sfd, "c3": sfd}
    assert h.reconciler.report.outcome == "pruning"
    assert h.apply(keep) is False
    assert h.phases() == {"f": "Deleting", "s": "Ready", "c1": sfd, "c2": sfd, "c3": sfd}
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Foo", "f", namespace)
    assert h.apply(keep) is False
    assert h.phases() == {"s": "Ready", "c3": "Deleting"}
    assert h.apply(keep) is True
    assert h.phases() == {"s": "Ready"}
    assert_released(kube, namespace, "c1")
    assert_released(kube, namespace, "c2")
    assert kube.get("v1", "ConfigMap", "c3", namespace) is None


def test_managed_instances_deleted_first_during_apply(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    crd = baz_crd["metadata"]["name"]
    objects = [
        custom("Foo", "f", finalizer=True),
        custom("Bar", "b", finalizer=True),
        custom("Baz", "z", finalizer=True),
        baz_crd,
    ]
    h.apply(objects)
    h.apply(objects)
    kube.observe("Foo", "f", namespace)
    h.apply_until(objects, bool, "everything to become ready")
    sfd = "ScheduledForDeletion"
    assert h.apply([]) is False
    assert h.phases() == {"b": "Deleting", "z": "Deleting", "f": sfd, crd: sfd}
    assert h.apply([]) is False
    assert h.phases() == {"b": "Deleting", "z": "Deleting", "f": sfd, crd: sfd}
    kube.finalize(f"{GROUP}/v1", "Bar", "b", namespace)
    kube.finalize(f"{GROUP}/v1", "Baz", "z", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Baz", "z", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Bar", "b", namespace)
    assert h.apply([]) is False
    assert h.phases() == {"f": sfd, crd: sfd}
    assert h.apply([]) is False
    assert h.phases() == {"f": "Deleting", crd: "Deleting"}
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)
    assert h.apply_until([], bool, "the Foo and the CRD to disappear") is True
    assert h.inventory == []
    assert kube.get(CRD_API, CRD_KIND, crd) is None


def test_used_namespace_deleted_after_its_contents(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    other = f"{namespace}-u"
    h = make_harness()
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}}, configmap("c", other)]
    h.apply_until(objects, bool, "ready")
    assert h.apply([]) is False
    assert h.phases() == {"c": "Deleting", other: "ScheduledForDeletion"}
    assert h.apply([]) is False
    assert h.phases() == {other: "Deleting"}  # its content is gone: deleted in this call
    ns = kube.get("v1", "Namespace", other)
    assert ns is not None and ns["metadata"].get("deletionTimestamp")  # minimal: stays Terminating


def test_desired_again_while_deleting(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    foo = custom("Foo", "f", finalizer=True)
    h.apply([foo])
    h.apply([foo])
    kube.observe("Foo", "f", namespace)
    assert h.apply([foo]) is True
    uid = kube.get(f"{GROUP}/v1", "Foo", "f", namespace)["metadata"]["uid"]  # type: ignore[index]
    assert h.apply([]) is False
    assert h.state() == {"f": ("Deleting", "Terminating")}
    # Scheduled again in step 8; the still-terminating old object is waited for in its wave.
    for _ in range(2):
        assert h.apply([foo]) is False
        assert h.state() == {"f": ("ScheduledForApplication", "Terminating")}
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Foo", "f", namespace)
    assert h.apply([foo]) is False
    assert h.state() == {"f": ("Creating", "InProgress")}
    live = kube.get(f"{GROUP}/v1", "Foo", "f", namespace)
    assert live is not None and live["metadata"]["uid"] != uid
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)


def test_deleting_object_recreated_by_another_owner_is_dropped(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    h.apply_until([configmap("c")], bool, "ready")
    assert h.apply([]) is False
    assert h.phases() == {"c": "Deleting"}
    kube.wait_gone("v1", "ConfigMap", "c", namespace)
    kube.create(configmap("c", namespace, data={"other": "1"}))
    assert h.apply([]) is True
    assert h.inventory == []
    assert kube.get("v1", "ConfigMap", "c", namespace)["data"] == {"other": "1"}  # type: ignore[index]


def test_crd_deletion_waits_for_instances(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    crd = baz_crd["metadata"]["name"]
    h.apply_until([baz_crd], bool, "the CRD to become ready")
    live = kube.get(CRD_API, CRD_KIND, crd)
    assert live is not None and NAME in live["metadata"]["finalizers"]
    foreign = custom("Baz", "foreign", namespace, finalizer=True)
    kube.create(foreign)
    message = (
        "error deleting custom resource definition "
        f"apiextensions.k8s.io/v1, Kind=CustomResourceDefinition {crd}, existing instances found"
    )
    for _ in range(2):
        with pytest.raises(InstancesExistError) as info:
            h.apply([])
        assert str(info.value) == message and info.value.retryable
        assert h.phases() == {crd: "ScheduledForDeletion"}
    kube.finalize(f"{GROUP}/v1", "Baz", "foreign", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Baz", "foreign", namespace)
    assert h.apply_until([], bool, "the CRD to disappear") is True
    assert kube.get(CRD_API, CRD_KIND, crd) is None


def test_crd_finalizer_on_create_and_update_and_removed_on_orphan(
    make_harness: HarnessFactory, kube: Kube, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    crd = baz_crd["metadata"]["name"]
    baz_crd["metadata"]["annotations"] = {f"{NAME}/delete-policy": "orphan"}
    h.apply_until([baz_crd], bool, "the CRD to become ready")
    assert NAME in kube.get(CRD_API, CRD_KIND, crd)["metadata"]["finalizers"]  # type: ignore[index]
    baz_crd["spec"]["names"]["shortNames"] = ["bz"]
    assert h.apply([baz_crd]) is False
    assert h.phases() == {crd: "Updating"}
    live = kube.get(CRD_API, CRD_KIND, crd)
    assert live is not None and live["spec"]["names"]["shortNames"] == ["bz"]
    assert NAME in live["metadata"]["finalizers"]
    h.apply_until([baz_crd], bool, "the CRD to become ready again")
    assert h.apply([]) is True
    live = kube.get(CRD_API, CRD_KIND, crd)
    assert live is not None and not live["metadata"].get("deletionTimestamp")
    assert NAME not in (live["metadata"].get("finalizers") or [])
    assert OWNER_KEY not in (live["metadata"].get("labels") or {})


# -- delete() ---------------------------------------------------------------------------------


def test_delete_waves(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    ready_five(h, kube, namespace)
    assert h.delete() is False
    assert h.phases() == {"f": "Deleting", "s": "Ready", "c1": "Ready", "c2": "Ready", "c3": "Ready"}
    assert h.reconciler.report.outcome == "deleting"
    assert h.delete() is False
    assert h.phases()["f"] == "Deleting"
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Foo", "f", namespace)
    assert h.delete() is False
    assert h.phases() == {"s": "Deleting", "c1": "Ready", "c2": "Ready", "c3": "Ready"}
    assert h.delete() is False
    assert h.phases() == {"c2": "Deleting"}
    assert h.delete() is True
    assert h.inventory == []
    assert_released(kube, namespace, "c1")
    assert_released(kube, namespace, "c3")
    assert kube.get("v1", "ConfigMap", "c2", namespace) is None


def test_delete_managed_instances_first(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    crd = baz_crd["metadata"]["name"]
    objects = [custom("Foo", "f"), custom("Bar", "b", finalizer=True), custom("Baz", "z", finalizer=True), baz_crd]
    h.apply(objects)
    h.apply(objects)
    kube.observe("Foo", "f", namespace)
    h.apply_until(objects, bool, "everything to become ready")
    assert h.delete() is False
    assert h.phases() == {"b": "Deleting", "z": "Deleting", "f": "Ready", crd: "Ready"}
    kube.finalize(f"{GROUP}/v1", "Bar", "b", namespace)
    kube.finalize(f"{GROUP}/v1", "Baz", "z", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Bar", "b", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Baz", "z", namespace)
    assert h.delete() is False
    assert h.phases() == {"f": "Ready", crd: "Ready"}
    assert h.delete() is False
    assert h.phases() == {"f": "Deleting", crd: "Deleting"}
    wait = kube.wait

    from tools.devcluster.pytest_plugin import wait_until

    wait_until(h.delete, wait, "delete() to finish")
    assert kube.get(CRD_API, CRD_KIND, crd) is None


def test_delete_leaves_foreign_object_and_reports_it(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    h.apply_until([configmap("c"), configmap("d")], bool, "ready")
    kube.merge(
        "v1",
        "ConfigMap",
        "c",
        namespace,
        {"metadata": {"labels": {OWNER_KEY: hash_owner_id("other")}, "annotations": {OWNER_KEY: "other"}}},
    )
    assert h.delete() is False
    assert h.phases() == {"d": "Deleting"}
    assert h.reconciler.report.conflicts == (f"/v1, Kind=ConfigMap {namespace}/c",)
    assert kube.get("v1", "ConfigMap", "c", namespace) is not None
    assert h.delete() is True


def test_delete_empty_inventory_makes_no_request(make_harness: HarnessFactory) -> None:
    h = make_harness()
    h.client.accounting.reset()
    assert h.delete() is True
    assert h.client.accounting.total == 0


# -- is_deletion_allowed() --------------------------------------------------------------------


def test_own_instance_of_in_set_crd_allows_deletion(make_harness: HarnessFactory, baz_crd: dict[str, Any]) -> None:
    h = make_harness(additional_managed_types=())
    objects = [baz_crd, custom("Baz", "z")]
    h.apply_until(objects, bool, "CRD and Baz to become ready")
    assert h.allowed() == (True, "")


def test_foreign_bar_blocks_deletion_with_empty_inventory(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    kube.create(custom("Bar", "foreign", namespace))
    try:
        assert h.allowed() == (False, "type Bar.testing.oam-operator.dev is still in use (instances exist)")
    finally:
        kube.delete(f"{GROUP}/v1", "Bar", "foreign", namespace)


def test_foreign_and_unlabelled_baz_block_deletion(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness(additional_managed_types=())
    crd = baz_crd["metadata"]["name"]
    h.apply_until([baz_crd], bool, "the CRD to become ready")
    assert h.allowed() == (True, "")
    labelled = custom("Baz", "foreign", namespace)
    labelled["metadata"]["labels"] = {OWNER_KEY: hash_owner_id("other")}
    kube.create(labelled)
    assert h.allowed() == (False, f"crd {crd} is still in use (instances exist)")
    kube.delete(f"{GROUP}/v1", "Baz", "foreign", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Baz", "foreign", namespace)
    kube.create(custom("Baz", "unlabelled", namespace))
    assert h.allowed() == (False, f"crd {crd} is still in use (instances exist)")


def test_all_orphan_items_allow_deletion_despite_foreign_instances(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness(additional_managed_types=())
    baz_crd["metadata"]["annotations"] = {f"{NAME}/delete-policy": "OrphanOnDelete"}
    h.apply_until([baz_crd, configmap("c", delete_policy="orphan")], bool, "ready")
    kube.create(custom("Baz", "foreign", namespace))
    assert h.allowed() == (True, "")


def test_api_service_finalizer_on_create_and_update_and_removed_on_orphan(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    import secrets

    group = f"x{secrets.token_hex(3)}.oam-operator.dev"
    name = f"v1.{group}"
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name, "annotations": {f"{NAME}/delete-policy": "orphan"}},
        "spec": {
            "group": group,
            "version": "v1",
            "service": {"namespace": namespace, "name": "nowhere", "port": 443},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
        },
    }
    api = "apiregistration.k8s.io/v1"
    h = make_harness(additional_managed_types=())
    try:
        h.apply([api_service])
        assert h.apply([api_service]) is False
        assert h.phases() == {name: "Creating"}  # no backend: never Available
        assert NAME in kube.get(api, "APIService", name)["metadata"]["finalizers"]  # type: ignore[index]
        api_service["spec"]["versionPriority"] = 20
        assert h.apply([api_service]) is False
        assert h.phases() == {name: "Updating"}
        live = kube.get(api, "APIService", name)
        assert live is not None and live["spec"]["versionPriority"] == 20
        assert NAME in live["metadata"]["finalizers"]
        assert h.apply([]) is True
        live = kube.get(api, "APIService", name)
        assert live is not None and NAME not in (live["metadata"].get("finalizers") or [])
        assert OWNER_KEY not in (live["metadata"].get("labels") or {})
    finally:
        if kube.get(api, "APIService", name) is not None:
            kube.merge(api, "APIService", name, "", {"metadata": {"finalizers": []}})
            kube.delete(api, "APIService", name)
