"""The ``topology`` policy (docs/multicluster.md#topology): what it selects, and its refusals word for word."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.operatorpolicies import read_operator_policies
from oam_operator.operatorpolicies.topology import Requirement, Topology, declared
from tests.unit.operatorpolicies.test_operator_policy_handlers import document, operator, policy, refusal, run


def topology_of(**properties: Any) -> Topology | None:
    result = run(operator(), document(policy("where", "topology", **properties)))
    return read_operator_policies(result, "shop", {}, allow_cross_namespace=False).topology


def test_a_selector_chooses_profiles_by_their_labels() -> None:
    chosen = topology_of(clusterSelector={
        "matchLabels": {"env": "prod"},
        "matchExpressions": [{"key": "region", "operator": "In", "values": ["eu", "us"]},
                             {"key": "retired", "operator": "DoesNotExist"}]})
    assert chosen is not None and chosen.by_selector and chosen.on_removal == "delete"
    assert chosen.selects("a", {"env": "prod", "region": "eu"})
    assert not chosen.selects("b", {"env": "prod", "region": "ap"})
    assert not chosen.selects("c", {"env": "prod", "region": "eu", "retired": "2026"})
    assert not chosen.selects("d", {"region": "eu"})


@pytest.mark.parametrize(("operator_", "values", "labels", "selected"), [
    ("In", ("a",), {"k": "a"}, True), ("In", ("a",), {}, False),
    ("NotIn", ("a",), {"k": "a"}, False), ("NotIn", ("a",), {}, True), ("NotIn", ("a",), {"k": "b"}, True),
    ("Exists", (), {"k": ""}, True), ("Exists", (), {}, False),
    ("DoesNotExist", (), {}, True), ("DoesNotExist", (), {"k": "x"}, False),
])
def test_each_operator_reads_as_kubernetes_reads_it(operator_: str, values: tuple[str, ...],
                                                    labels: dict[str, str], selected: bool) -> None:
    assert Requirement("k", operator_, values).matches(labels) is selected


def test_a_list_names_its_profiles_and_an_empty_selector_selects_every_profile() -> None:
    named = topology_of(clusters=["spoke-1", "spoke-2"], onRemoval="orphan")
    assert named is not None and named.clusters == ("spoke-1", "spoke-2") and named.on_removal == "orphan"
    assert named.selects("spoke-2", {}) and not named.selects("spoke-3", {"env": "prod"})
    everything = topology_of(clusterSelector={})
    assert everything is not None and everything.selects("any", {})


def test_the_recorded_value_reads_back_as_declared() -> None:
    spec = document(policy("where", "topology", clusterSelector={
        "matchLabels": {"env": "prod"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]}))
    assert declared(spec["spec"]) == topology_of(clusterSelector={
        "matchLabels": {"env": "prod"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]})
    assert declared({"policies": [{"name": "p", "type": "topology", "properties": {}}]}) is None  # refused later
    assert declared({}) is None


@pytest.mark.parametrize(("properties", "message"), [
    ({}, "set exactly one of clusterSelector and clusters"),
    ({"clusters": ["a"], "clusterSelector": {}}, "set exactly one of clusterSelector and clusters"),
    ({"clusters": []}, "property 'clusters' must not be empty"),
    ({"clusters": ["a", ""]}, "clusters must be a list of non-empty strings"),
    ({"clusters": ["a", "b", "a"]}, 'clusters names "a" more than once'),
    ({"clusters": ["a"], "onRemoval": "keep"},
     '(type "topology"): properties.onRemoval: unknown onRemoval "keep" (valid: delete, orphan)'),
    ({"clusterSelector": {"matchLabels": {"env": 1}}}, "clusterSelector.matchLabels must map label keys to strings"),
    ({"clusterSelector": {"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]}},
     'clusterSelector.matchExpressions[0].operator "Gt" is not one of In, NotIn, Exists, DoesNotExist'),
    ({"clusterSelector": {"matchExpressions": [{"key": "k", "operator": "In"}]}},
     "clusterSelector.matchExpressions[0].values must not be empty for operator In"),
    ({"clusterSelector": {"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]}},
     "clusterSelector.matchExpressions[0].values must be empty for operator Exists"),
    ({"clusterSelector": {"matchExpressions": [{"operator": "Exists"}]}},
     '(type "topology"): properties.clusterSelector.matchExpressions[0]: "key" is required'),
    ({"clusters": ["a"], "namespace": "Team_B"},
     'namespace "Team_B" is not a valid namespace: a lowercase RFC 1123 label must consist of lower case '
     "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
     "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    ({"clusters": ["a"], "namespace": 7},
     '(type "topology"): properties.namespace: expected string, got int'),
])
def test_bad_topologies_are_refused_with_the_exact_message(properties: dict[str, Any], message: str) -> None:
    said = refusal(policy("where", "topology", **properties))
    assert said == (f'policy "where" {message}' if message.startswith("(type") else f'policy "where": {message}')


def test_a_target_namespace_is_recorded_and_read_back() -> None:
    spec = document(policy("where", "topology", clusters=["a"], namespace="team-b"))
    assert declared(spec["spec"]) == topology_of(clusters=["a"], namespace="team-b") == Topology(
        "where", clusters=("a",), namespace="team-b")
    assert topology_of(clusters=["a"]) == Topology("where", clusters=("a",))  # none: the Application's own
    assert Topology.from_json(Topology("where", clusters=("a",)).to_json()).namespace == ""


def test_two_topology_policies_are_refused() -> None:
    assert refusal(policy("first", "topology", clusters=["a"]), policy("second", "topology", clusters=["b"])) == (
        'policy "second": only one topology policy is allowed; policy "first" already sets it')
