"""The ``override`` policy (docs/multicluster.md#overrides): the merge, the clusters it picks, its refusals."""

from __future__ import annotations

import pytest

from oam_operator.controller.reconcile import fleet
from oam_operator.oam.errors import TransformError
from oam_operator.operatorpolicies import read_operator_policies
from oam_operator.operatorpolicies.override import applied, declared
from tests.unit.operatorpolicies.test_operator_policy_handlers import document, operator, policy, refusal, run

WEB = {"name": "web", "type": "webservice", "properties": {"image": "nginx:1.27", "replicas": 2,
                                                           "env": {"MODE": "prod", "DEBUG": "0"}},
       "traits": [{"type": "ingress", "properties": {"host": "shop.example.com"}}]}


def test_overrides_apply_in_order_to_properties_and_traits() -> None:
    first = declared({"components": [WEB], "policies": [
        policy("eu", "override", clusters=["eu"], components=[
            {"name": "web", "properties": {"replicas": 5, "env": {"DEBUG": None}},
             "traits": [{"type": "ingress", "properties": {"host": "eu.shop.example.com"}},
                        {"type": "scaler", "properties": {"max": 10}}]}]),
        policy("more", "override", clusters=["eu"], components=[{"name": "web", "properties": {"replicas": 7}}])]})
    (web,) = applied([WEB], first)
    assert web["properties"] == {"image": "nginx:1.27", "replicas": 7, "env": {"MODE": "prod"}}
    assert web["traits"] == [{"type": "ingress", "properties": {"host": "eu.shop.example.com"}},
                             {"type": "scaler", "properties": {"max": 10}}]
    assert WEB["properties"]["replicas"] == 2  # the spec itself is not touched


def test_a_cluster_application_carries_the_overrides_that_select_its_cluster() -> None:
    spec = {"components": [WEB], "policies": [
        {"name": "where", "type": "topology", "properties": {"clusterSelector": {}}},
        policy("eu", "override", clusterSelector={"matchLabels": {"region": "eu"}},
               components=[{"name": "web", "properties": {"replicas": 5}}])]}
    body = {"metadata": {"name": "shop", "namespace": "team", "uid": "u"}, "spec": spec}
    eu = fleet.child(body, "eu-1", "oam-operator.dev", 1, labels={"region": "eu"})
    us = fleet.child(body, "us-1", "oam-operator.dev", 1, labels={"region": "us"})
    assert eu["spec"]["components"][0]["properties"]["replicas"] == 5
    assert us["spec"]["components"][0]["properties"]["replicas"] == 2
    assert "policies" not in eu["spec"] and "policies" not in us["spec"]


def test_an_override_naming_a_missing_component_is_refused() -> None:
    where = policy("where", "topology", clusters=["a"])
    assert refusal(where, policy("eu", "override", clusters=["a"], components=[{"name": "db"}])) == (
        'policy "eu": components[0]: "db" is not a component of the Application')


def test_an_override_without_a_topology_is_refused() -> None:
    result = run(operator(), document(policy("eu", "override", clusters=["a"], components=[{"name": "c"}])))
    with pytest.raises(TransformError) as refused:
        read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert str(refused.value) == ('policy "eu": an override policy needs a topology policy, which chooses the '
                                  "clusters it overrides on")


def test_an_override_with_an_unknown_property_is_refused_in_the_components_words() -> None:
    from oam_operator.controller.reconcile.passes import apply_pass
    from oam_operator.controller.reconcile.seams import Memory
    from tests.unit.unitkit import application, outcome, pass_environment

    valid = {"name": "web", "type": "webservice", "properties": {"image": "nginx:1.27", "replicas": 2}}
    body = application(components=[valid], policies=[
        {"name": "where", "type": "topology", "properties": {"clusters": ["eu"]}},
        policy("eu", "override", clusters=["eu"], components=[{"name": "web", "properties": {"replica": 5}}])])
    assert outcome(apply_pass(body, Memory(), pass_environment()).status) == ("Error", "TransformFailed", (
        'policy "eu": component "web" (type "webservice"): properties: unsupported field "replica" (allowed: '
        "affinity, args, command, env, envFrom, image, initContainers, lifecycle, port, probes, replicas, resources, "
        'securityContext, sidecars, topologySpread, volumes, workingDir); did you mean "replicas"?'))
