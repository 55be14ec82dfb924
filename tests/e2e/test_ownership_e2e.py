"""Ownership, adoption, orphaning, abandoning and foreign finalizers
(docs/reconciler.md#adoption-policy, docs/reconciler.md#delete-policy, docs/operator.md#the-delete-branch)."""

from __future__ import annotations

from typing import Any

from e2ekit import DOMAIN, Kube, condition, configmap_component, inventory, sleep_briefly

from tools.devcluster.pytest_plugin import default_wait, wait_until


def _delete_app(kube: Kube, name: str) -> None:
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications", name)


def test_two_applications_producing_the_same_object_conflict(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("first", {"components": [configmap_component("shared")]})
    first = kube.wait_ready("first")
    kube.apply_app("second", {"components": [configmap_component("shared", {"key": "second"})]})
    app = kube.wait_state("second", "Error", "OwnershipConflict")
    message = condition(app, "Ready")["message"]
    cluster_id = kube.core.read_namespace("kube-system").metadata.uid
    assert inventory(first)[0]["name"] == "shared"
    assert message == (f"Owner conflict; object /v1, Kind=ConfigMap {kube.namespace}/shared is owned by "
                       f"{cluster_id}/{kube.namespace}/first")
    assert kube.core.read_namespaced_config_map("shared", kube.namespace).data == {"key": "shared"}


def test_an_unowned_object_is_adopted_unless_the_policy_says_never(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.core.create_namespaced_config_map(kube.namespace, {"metadata": {"name": "existing"}, "data": {"key": "old"}})
    kube.core.create_namespaced_config_map(kube.namespace, {"metadata": {"name": "guarded"}, "data": {"key": "old"}})
    kube.apply_app("never", {"adoptionPolicy": "Never", "components": [configmap_component("guarded")]})
    app = kube.wait_state("never", "Error", "OwnershipConflict")
    assert "without owner" in condition(app, "Ready")["message"]
    assert kube.core.read_namespaced_config_map("guarded", kube.namespace).data == {"key": "old"}
    kube.apply_app("adopter", {"components": [configmap_component("existing")]})
    kube.wait_ready("adopter")
    adopted = kube.core.read_namespaced_config_map("existing", kube.namespace)
    assert adopted.data == {"key": "existing"}
    assert f"{DOMAIN}/owner-id" in adopted.metadata.labels


def test_delete_policy_orphan_leaves_objects_released(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("keeper", {"deletePolicy": "Orphan", "components": [configmap_component("kept")]})
    kube.wait_ready("keeper")
    _delete_app(kube, "keeper")
    wait_until(lambda: kube.app_or_none("keeper") is None, default_wait(kube.cluster), "the Application to go")
    kept = kube.core.read_namespaced_config_map("kept", kube.namespace)
    assert f"{DOMAIN}/owner-id" not in (kept.metadata.labels or {})
    assert f"{DOMAIN}/owner-id" not in (kept.metadata.annotations or {})
    kube.apply_app("heir", {"components": [configmap_component("kept")]})
    kube.wait_ready("heir")


def test_abandon_leaves_everything_and_goes_at_once(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("gone", {"components": [configmap_component("left")]}, annotations={f"{DOMAIN}/abandon": "true"})
    kube.wait_ready("gone")
    _delete_app(kube, "gone")
    wait_until(lambda: kube.app_or_none("gone") is None, default_wait(kube.cluster), "the Application to go")
    left = kube.core.read_namespaced_config_map("left", kube.namespace)
    assert f"{DOMAIN}/owner-id" in left.metadata.labels  # left exactly as it was
    abandoned = [e for e in kube.events("gone") if e.reason == "Abandoned"]
    assert len(abandoned) == 1 and abandoned[0].type == "Warning"
    assert abandoned[0].message == "Objects left in place; inventory dropped"


def test_a_foreign_finalizer_blocks_deletion_until_removed(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("held", {"components": [configmap_component("cfg")]})
    kube.wait_ready("held")
    kube.custom.patch_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications",
                                               "held", {"metadata": {"finalizers": [DOMAIN, "example.com/hold"]}})
    _delete_app(kube, "held")
    app = kube.wait_state("held", "Deleting", "DeletionBlocked")
    assert condition(app, "Ready")["message"] == (
        "Deletion blocked due to existing foreign finalizers: example.com/hold")
    sleep_briefly(1)
    assert kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "cfg"}
    current = kube.app("held")["metadata"]["finalizers"]
    kube.custom.patch_namespaced_custom_object(
        "oam-operator.dev", "v1alpha1", kube.namespace, "applications", "held",
        {"metadata": {"finalizers": [f for f in current if f != "example.com/hold"]}})
    wait_until(lambda: kube.app_or_none("held") is None, default_wait(kube.cluster), "the Application to go")
    assert kube.owned() == []


def test_an_invalid_authored_apply_order_is_refused_with_the_reconcilers_text(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    component = configmap_component("c", **{f"{DOMAIN}/apply-order": "32768"})
    kube.apply_app("orders", {"components": [component]})
    app = kube.wait_state("orders", "Error", "InvalidObjects")
    assert condition(app, "Ready")["message"] == (
        f"Error validating object /v1, Kind=ConfigMap {kube.namespace}/c: invalid value for annotation "
        "oam-operator.dev/apply-order: 32768: value 32768 not in allowed range [-32768,32767]")


def test_a_trait_generating_an_object_twice_is_a_transform_failure_naming_it(start_operator: Any, kube: Kube) -> None:
    """docs/transform.md#duplicate-objects-of-traits: issue 27 point 7 (it was InvalidObjects:
    Duplicate object HorizontalPodAutoscaler …); nothing is applied."""
    start_operator(kube.namespace)
    web = {"name": "web", "type": "worker", "properties": {"image": "ghcr.io/example/web:1.0"},
           "traits": [{"type": "scaler", "properties": {"minReplicas": 2, "maxReplicas": 4}},
                      {"type": "scaler", "properties": {"minReplicas": 3, "maxReplicas": 9}}]}
    kube.apply_app("twice", {"components": [web]})
    app = kube.wait_state("twice", "Error", "TransformFailed")
    assert condition(app, "Ready")["message"] == (
        'component "web" trait "scaler": duplicate HorizontalPodAutoscaler "web-hpa": already generated by '
        'component "web" trait "scaler"')
    assert kube.owned() == []
    assert inventory(app) == []
