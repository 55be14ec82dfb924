"""A topology's target ``namespace`` (docs/multicluster.md#topology): the cluster Application
carries it, its pass renders into it, confinement and ``allowedNamespaces`` hold for it."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile import fleet, fleetns
from oam_operator.controller.reconcile.application import seen
from oam_operator.controller.reconcile.plan import digests_of
from oam_operator.controller.reconcile.seams import Memory
from tests.unit import unitkit
from tests.unit.controller.test_fleet import DOMAIN, fleet_app
from tests.unit.unitkit import FakeReconciler, application, outcome, pass_environment

ANNOTATION = "oam-operator.dev/fleet-namespace"


def test_a_cluster_application_carries_a_target_namespace_other_than_its_own() -> None:
    made = fleet.child(fleet_app({"clusters": ["eu"], "namespace": "team-b"}), "eu", DOMAIN)
    assert made["metadata"]["namespace"] == "shop"  # the cluster Application itself stays on the hub, beside its fleet
    assert made["metadata"]["annotations"][ANNOTATION] == "team-b"
    assert "namespace" not in str(made["spec"].get("policies"))  # the topology policy is not carried
    for same in ({"clusters": ["eu"], "namespace": "shop"}, {"clusters": ["eu"]}):
        assert ANNOTATION not in fleet.child(fleet_app(same), "eu", DOMAIN)["metadata"]["annotations"]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The objects the pass's reconciler got and the options it was built with."""
    seen_: dict[str, Any] = {"objects": [], "options": []}
    fake = FakeReconciler()
    original = fake.apply

    def apply(inventory: Any, objects: list[dict[str, Any]], *args: Any, **kwargs: Any) -> bool:
        seen_["objects"].append(objects)
        return original(inventory, objects, *args, **kwargs)

    fake.apply = apply  # type: ignore[method-assign]

    def build(domain: str, client: Any, options: Any) -> FakeReconciler:
        seen_["options"].append(options)
        return fake

    monkeypatch.setattr(unitkit, "_injected_reconciler", build)
    return seen_


def cluster_app(namespace: str = "team-b") -> dict[str, Any]:
    return application("web-eu", profile="eu", annotations={ANNOTATION: namespace})


def profile(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": "eu"},
            "spec": spec}


PROFILES = {"eu": profile()}


@pytest.mark.parametrize(("cross", "allowed"), [(False, frozenset({"shop"})), (True, None)])
def test_the_pass_renders_into_the_target_and_confinement_holds_for_it(built: dict[str, Any], cross: bool,
                                                                       allowed: frozenset[str] | None) -> None:
    env = pass_environment(profiles=PROFILES, allow_cross_namespace_objects=cross)
    unitkit.run_apply(cluster_app(), Memory(), env)
    (objects,) = built["objects"]
    assert [(o["kind"], o["metadata"]["namespace"]) for o in objects] == [("ConfigMap", "team-b")]
    # By default only the Application's own namespace: the reconciler refuses the ConfigMap in
    # team-b (docs/reconciler.md#target-confinement); --allow-cross-namespace-objects lifts it.
    assert built["options"][0].allowed_namespaces == allowed


def test_a_changed_target_is_a_new_revision_and_wakes_the_application() -> None:
    spec = cluster_app()["spec"]
    before, after = (digests_of(DOMAIN, spec, 1, "eu", PROFILES["eu"], moved) for moved in ("", "team-b"))
    assert before != after and before == digests_of(DOMAIN, spec, 1, "eu", PROFILES["eu"])
    assert fleetns.moved(application(annotations={ANNOTATION: "shop"}), DOMAIN) == ""
    key = f"{DOMAIN}/requested-at"
    assert seen(cluster_app()["metadata"], key) != seen(cluster_app("team-c")["metadata"], key)


def test_allowed_namespaces_must_allow_the_target_too() -> None:
    env = pass_environment(profiles={"eu": profile(allowedNamespaces=["shop"])})
    env.targets = lambda name, profile, namespace: None
    result = unitkit.run_apply(cluster_app(), Memory(), env)
    assert outcome(result.status) == ("Error", "NotPermitted", (
        "ClusterProfile eu does not allow namespace team-b, the topology's target namespace "
        "(allowedNamespaces: shop)"))
