"""Exact errors, untouched inventories, adoption and confinement
(docs/reconciler.md#errors, docs/reconciler.md#adoption-policy, docs/reconciler.md#target-confinement)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DIGEST_KEY, NAME, OWNER_KEY, HarnessFactory, Kube, configmap, custom, secret

from oam_operator.reconciler.errors import ObjectValidationError, OwnershipConflictError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.objectpolicies import AdoptionPolicy


def api_service(name: str, **annotations: str) -> dict[str, Any]:
    group = name.split(".", 1)[1]
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name, "annotations": {f"{NAME}/{k.replace('_', '-')}": v for k, v in annotations.items()}},
        "spec": {"group": group, "version": name.split(".", 1)[0], "groupPriorityMinimum": 100, "versionPriority": 10},
    }


def expect_error(h: Any, objects: list[dict[str, Any]], message: str, cls: type = ObjectValidationError) -> None:
    before = h.stored
    h.client.accounting.reset()
    with pytest.raises(cls) as info:
        h.apply(objects)
    assert str(info.value) == message
    assert h.stored == before  # byte-identical persisted inventory
    assert h.client.accounting.writes == 0


def exact_errors(ns: str, baz_crd: dict[str, Any]) -> list[tuple[list[dict[str, Any]], str]]:
    generated = configmap("")
    generated["metadata"] = {"generateName": "g-", "namespace": ns}
    hpa = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 2},
    }
    hpa2 = {**hpa, "apiVersion": "autoscaling/v2"}
    no_kind = configmap("c")
    del no_kind["kind"]
    bad_label = configmap("c")
    bad_label["metadata"]["labels"] = {"n": 1}
    bad_annotation = configmap("c")
    bad_annotation["metadata"]["annotations"] = {"n": True}
    namespace_obj = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": f"{ns}-p", "annotations": {f"{NAME}/purge-order": "1"}},
    }
    crd = {**baz_crd, "metadata": {**baz_crd["metadata"], "annotations": {f"{NAME}/purge-order": "1"}}}
    unknown = {"apiVersion": "nope.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    return [
        (
            [generated],
            f"object /v1, Kind=ConfigMap {ns}/ specifies metadata.generateName "
            "(but dependent objects are not allowed to do so)",
        ),
        ([hpa, hpa2], f"duplicate object HorizontalPodAutoscaler.autoscaling {ns}/h"),
        ([no_kind], "error normalizing objects: unstructured object /v1, Kind= c is missing type information"),
        (
            [bad_label],
            "error normalizing objects: unstructured object /v1, Kind=ConfigMap c has invalid labels "
            "(probably because of non-string label values)",
        ),
        (
            [bad_annotation],
            "error normalizing objects: unstructured object /v1, Kind=ConfigMap c has invalid annotations "
            "(probably because of non-string annotation values)",
        ),
        (
            [namespace_obj],
            f"error validating object /v1, Kind=Namespace {ns}-p: namespaces must not define a purge order",
        ),
        (
            [crd],
            "error validating object apiextensions.k8s.io/v1, Kind=CustomResourceDefinition "
            "bazs.testing.oam-operator.dev: custom resource definitions must not define a purge order",
        ),
        (
            [api_service("v1.x.oam-operator.dev", purge_order="1")],
            "error validating object apiregistration.k8s.io/v1, Kind=APIService v1.x.oam-operator.dev: "
            "api services must not define a purge order",
        ),
        (
            [unknown],
            "error getting rest mapping for object nope.example.com/v1, Kind=Thing t: "
            'no matches for kind "Thing" in version "nope.example.com/v1"',
        ),
        (
            [configmap("c", adoption_policy="Invalid")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/adoption-policy: invalid",
        ),
        (
            [configmap("c", apply_order="32768")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/apply-order: 32768: value 32768 not in allowed range [-32768,32767]",
        ),
        (
            [configmap("c", delete_order="-32769")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/delete-order: -32769: value -32769 not in allowed range [-32768,32767]",
        ),
        (
            [configmap("c", purge_order="abc")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/purge-order: abc: not a decimal integer",
        ),
        (
            [configmap("c", reapply_interval="")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/reapply-interval: : invalid duration",
        ),
        (
            [configmap("c", reapply_interval="invalid")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: invalid value for annotation "
            f"{NAME}/reapply-interval: invalid: invalid duration",
        ),
        (
            [configmap("c", status_hint="has-observed-generation=x")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: "
            "status hint has-observed-generation does not take a value",
        ),
        (
            [configmap("c", status_hint="bogus")],
            f"error validating object /v1, Kind=ConfigMap {ns}/c: unknown status hint bogus",
        ),
    ]


def test_exact_errors_leave_inventory_untouched(
    make_harness: HarnessFactory, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    h.apply_until([configmap("ok")], bool, "a first object to be ready")
    for objects, message in exact_errors(namespace, baz_crd):
        expect_error(h, [configmap("ok"), *objects], message)


def test_policy_spellings_accepted_end_to_end(make_harness: HarnessFactory, namespace: str) -> None:
    h = make_harness()
    objects = [
        configmap("a", adoption_policy="If Unowned", update_policy="SSAMerge", delete_policy="orphan_on_delete"),
        configmap("b", reconcile_policy="OnObjectOrComponentChange", update_policy="ssa-override"),
        configmap("d", update_policy="Default", delete_policy="ORPHAN", reapply_interval="3m33s"),
    ]
    h.apply_until(objects, bool, "ready")
    items = {i.name: i for i in h.inventory}
    assert items["a"].update_policy.value == "SsaMerge" and items["a"].delete_policy.value == "OrphanOnDelete"
    assert items["b"].reconcile_policy.value == "OnObjectOrComponentChange"
    assert items["d"].update_policy.value == "SsaOverride"  # "Default" = the option
    assert items["d"].delete_policy.value == "Orphan"


def test_object_set_errors(make_harness: HarnessFactory, namespace: str, baz_crd: dict[str, Any]) -> None:
    h = make_harness()
    ns2 = f"{namespace}-s"
    crd = {**baz_crd, "metadata": {**baz_crd["metadata"], "annotations": {f"{NAME}/apply-order": "1"}}}
    expect_error(
        h,
        [crd, custom("Baz", "z")],
        f"error validating object set (testing.oam-operator.dev/v1, Kind=Baz {namespace}/z): "
        "managed instance must not have an apply order lesser than the one of its type",
    )
    expect_error(
        h,
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns2}}, configmap("c", ns2, delete_order="1")],
        f"error validating object set (/v1, Kind=ConfigMap {ns2}/c): "
        "namespaced object must not have a delete order greater than the one of its namespace",
    )
    h.apply_until([baz_crd, custom("Baz", "z")], bool, "CRD and Baz to be ready")
    expect_error(
        h,
        [custom("Baz", "z")],
        f"error validating object set (testing.oam-operator.dev/v1, Kind=Baz {namespace}/z): "
        "managed instance is not being deleted, but the managing type is",
    )


def _existing(kube: Kube, namespace: str) -> None:
    kube.create(configmap("c", namespace, data={"pre": "1"}))
    s = secret("s", namespace)
    s["metadata"]["labels"] = {OWNER_KEY: hash_owner_id("other-owner")}
    s["metadata"]["annotations"] = {OWNER_KEY: "other-owner"}
    kube.create(s)


def test_adoption_if_unowned(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    _existing(kube, namespace)
    h = make_harness()
    h.apply_until([configmap("c")], bool, "the adopted ConfigMap to be ready")
    assert kube.get("v1", "ConfigMap", "c", namespace)["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)  # type: ignore[index]
    expect_error(
        h,
        [configmap("c"), secret("s")],
        f"owner conflict; object /v1, Kind=Secret {namespace}/s is owned by other-owner",
        OwnershipConflictError,
    )


def test_adoption_never(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    _existing(kube, namespace)
    h = make_harness(adoption_policy=AdoptionPolicy.NEVER)
    expect_error(
        h,
        [configmap("c")],
        f"found existing object /v1, Kind=ConfigMap {namespace}/c without owner",
        OwnershipConflictError,
    )
    expect_error(
        h,
        [secret("s", adoption_policy="never")],
        f"owner conflict; object /v1, Kind=Secret {namespace}/s is owned by other-owner",
        OwnershipConflictError,
    )


def test_adoption_always(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    _existing(kube, namespace)
    h = make_harness()
    objects = [configmap("c", adoption_policy="always"), secret("s", adoption_policy="Always")]
    h.apply_until(objects, bool, "both adopted objects to be ready")
    for kind, name in (("ConfigMap", "c"), ("Secret", "s")):
        live = kube.get("v1", kind, name, namespace)
        assert live is not None
        assert live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)
        assert live["metadata"]["annotations"][OWNER_KEY] == h.owner_id
        assert live["metadata"]["annotations"][DIGEST_KEY] == h.item(name).digest


def test_confinement(make_harness: HarnessFactory, namespace: str) -> None:
    h = make_harness(allowed_namespaces=frozenset({namespace}), allow_cluster_scoped=False)
    expect_error(
        h,
        [configmap("c"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"{namespace}-z"}}],
        f"object /v1, Kind=Namespace {namespace}-z is cluster-scoped; cluster-scoped objects are not allowed",
    )
    expect_error(
        h,
        [configmap("c"), configmap("d", "elsewhere")],
        f"object /v1, Kind=ConfigMap elsewhere/d is in namespace elsewhere; "
        f"only objects in namespace(s) {namespace} are allowed",
    )
    assert h.client.accounting.count(verb="get") == 0  # refused before anything was read
    h.apply_until([configmap("c")], bool, "the confined object to be ready")
