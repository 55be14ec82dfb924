"""apply(): single objects, steady state, checkpoint, drift, namespaces, scope
(docs/reconciler.md#steps-of-an-apply-call)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from conftest import DIGEST_KEY, GROUP, OWNER_KEY, HarnessFactory, Kube, configmap, custom, secret

from oam_operator.reconciler.errors import TransientApiError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.objectpolicies import MissingNamespacesPolicy


def test_one_configmap_three_calls_then_steady_state(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [configmap("c")]
    assert h.apply(objects) is False
    assert h.state() == {"c": ("ScheduledForApplication", "InProgress")}
    assert h.reconciler.report.outcome == "checkpoint"
    assert kube.get("v1", "ConfigMap", "c", namespace) is None  # checkpoint: nothing created yet

    assert h.apply(objects) is False
    assert h.state() == {"c": ("Creating", "InProgress")}
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None
    assert live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)
    assert live["metadata"]["annotations"][OWNER_KEY] == h.owner_id
    assert live["metadata"]["annotations"][DIGEST_KEY] == h.item("c").digest

    assert h.apply(objects) is True
    assert h.state() == {"c": ("Ready", "Current")}

    h.client.accounting.reset()
    assert h.apply(objects) is True
    assert h.client.accounting.writes == 0
    assert h.reconciler.report.outcome == "done"


def test_seed_contract_first_call_in_desired_state_costs_no_write(make_harness: HarnessFactory, namespace: str) -> None:
    """A new reconciler (e.g. after an operator restart) with the persisted inventory returns
    True on its first call without a single write request, counted by the client."""
    objects = [configmap(f"c{i}") for i in range(3)] + [secret("s")]
    h = make_harness()
    h.apply_until(objects, bool, "the objects to become ready")
    fresh = make_harness()
    fresh.stored, fresh.owner_id = h.stored, h.owner_id
    before = fresh.stored
    assert fresh.apply(objects) is True
    assert fresh.client.accounting.writes == 0
    assert fresh.client.accounting.count(verb="create") == 0
    assert fresh.stored == before


def test_foo_stays_creating_until_observed(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [custom("Foo", "f")]
    assert h.apply(objects) is False
    assert h.apply(objects) is False
    assert h.state() == {"f": ("Creating", "InProgress")}
    for _ in range(2):
        assert h.apply(objects) is False
        assert h.state() == {"f": ("Creating", "InProgress")}
        assert h.reconciler.report.outcome == "waiting"
    kube.observe("Foo", "f", namespace)
    assert h.apply(objects) is True
    assert h.state() == {"f": ("Ready", "Current")}


def test_drift_deleted_object_is_recreated(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [configmap("c")]
    h.apply_until(objects, bool, "ready")
    kube.delete("v1", "ConfigMap", "c", namespace)
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Creating", "InProgress")}
    assert kube.get("v1", "ConfigMap", "c", namespace) is not None
    assert h.apply(objects) is True


def test_missing_namespace_created_bare_and_kept(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    other = f"{namespace}-x"
    h = make_harness()
    objects = [configmap("c", other)]
    assert h.apply(objects) is False
    assert kube.get("v1", "Namespace", other) is None
    assert h.apply(objects) is False
    ns = kube.get("v1", "Namespace", other)
    assert ns is not None
    assert not (ns["metadata"].get("labels") or {}).keys() - {"kubernetes.io/metadata.name"}
    assert not ns["metadata"].get("annotations")
    assert [i.kind for i in h.inventory] == ["ConfigMap"]
    assert h.apply(objects) is True
    assert h.apply([]) is False
    assert h.apply_until([], bool, "the ConfigMap to be pruned") is True
    assert kube.get("v1", "ConfigMap", "c", other) is None
    assert kube.get("v1", "Namespace", other) is not None
    kube.delete("v1", "Namespace", other)


def test_missing_namespace_do_not_create(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    other = f"{namespace}-y"
    h = make_harness(missing_namespaces_policy=MissingNamespacesPolicy.DO_NOT_CREATE)
    objects = [configmap("c", other)]
    assert h.apply(objects) is False
    with pytest.raises(TransientApiError) as info:
        h.apply(objects)
    assert info.value.retryable
    assert str(info.value).startswith(f"error creating object /v1, Kind=ConfigMap {other}/c: 404 Not Found: ")
    assert kube.get("v1", "Namespace", other) is None


def test_namespace_object_in_the_set(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    other = f"{namespace}-n"
    h = make_harness()
    objects: list[dict[str, Any]] = [
        configmap("c", other),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}},
    ]
    assert h.apply(objects) is False
    assert h.apply(objects) is False
    assert h.state() == {other: ("Creating", "InProgress"), "c": ("Creating", "InProgress")}
    assert kube.get("v1", "ConfigMap", "c", other) is not None
    assert [i.kind for i in h.inventory] == ["ConfigMap", "Namespace"]  # deletion order
    assert h.apply(objects) is True


def test_crd_and_its_cr_in_one_set(make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: Any) -> None:
    h = make_harness()
    baz = custom("Baz", "b")  # no namespace: defaulted from the CRD's scope before it is registered
    ns_obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"{namespace}-c", "namespace": "bogus"}}
    objects = [baz, baz_crd, ns_obj]
    assert h.apply(objects) is False
    baz_item = h.item("b")
    assert baz_item.namespace == namespace
    assert h.item(f"{namespace}-c").namespace == ""  # cluster-scoped: namespace cleared
    h.apply_until(objects, bool, "CRD, namespace and Baz to become ready", timeout=60)
    assert kube.get(f"{GROUP}/v1", "Baz", "b", namespace) is not None


def test_secret_string_data_folded_and_digest_stable(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [secret("s")]
    h.apply_until(objects, bool, "ready")
    live = kube.get("v1", "Secret", "s", namespace)
    assert live is not None
    assert live["data"] == {"k": base64.b64encode(b"v").decode()}
    assert "stringData" not in live
    digest = h.item("s").digest
    h.client.accounting.reset()
    assert h.apply(objects) is True
    assert h.item("s").digest == digest
    assert h.client.accounting.writes == 0


def test_manifest_cannot_forge_ownership(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    forged = configmap("c")
    forged["metadata"]["labels"] = {OWNER_KEY: "forged"}
    forged["metadata"]["annotations"] = {OWNER_KEY: "someone", DIGEST_KEY: "abc"}
    h.apply_until([forged], bool, "ready")
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None
    assert live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)
    assert live["metadata"]["annotations"][OWNER_KEY] == h.owner_id
    assert live["metadata"]["annotations"][DIGEST_KEY] == h.item("c").digest != "abc"
