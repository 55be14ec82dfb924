"""Policy dispatch and the built-in policy handlers (docs/transform.md#policy-handlers, docs/transform.md#policies)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit import cm, dep, document, parse, place, run

from oam_operator.oam import (
    ApplicationPolicy,
    PolicyError,
    PolicyResult,
    RegistrationError,
    TransformContext,
    TransformError,
    new_builtin_transformer,
)
from oam_operator.oam.document.schema import walk_schema
from oam_operator.oam.engine.handlers import ContractMetadata, Schema
from oam_operator.oam.policies import DependencyPolicy, PlacementPolicy

HINT = (
    "it configures delivery, which the transform leaves to the consumer that delivers the application; "
    "a consumer that delivers through Flux registers its own handler"
)


def transform_error(components: list[dict[str, Any]], policies: list[dict[str, Any]]) -> str:
    with pytest.raises(TransformError) as info:
        run(document(components, policies), validate=False)
    return str(info.value)


ABC = [cm("a"), cm("b"), cm("c")]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "missing required property 'rules'"),
        ({"rules": {"a": 1}}, "property 'rules' must be a list"),
        ({"rules": []}, "property 'rules' must not be empty"),
        ({"rules": ["a"]}, "rules[0] must be a map"),
        ({"rules": [{"dependsOn": ["b"]}]}, "rules[0].component is required and must be a string"),
        ({"rules": [{"component": "", "dependsOn": ["b"]}]}, "rules[0].component is required and must be a string"),
        ({"rules": [{"component": 5, "dependsOn": ["b"]}]}, "rules[0].component is required and must be a string"),
        ({"rules": [{"component": "a"}]}, "rules[0].dependsOn is required"),
        ({"rules": [{"component": "a", "dependsOn": "b"}]}, "rules[0].dependsOn must be a list"),
        ({"rules": [{"component": "a", "dependsOn": []}]}, "rules[0].dependsOn must not be empty"),
        ({"rules": [{"component": "a", "dependsOn": ["b", ""]}]}, "rules[0].dependsOn[1] must be a non-empty string"),
        ({"rules": [{"component": "a", "dependsOn": [3]}]}, "rules[0].dependsOn[0] must be a non-empty string"),
        # every rule is parsed before any name is checked
        (
            {"rules": [{"component": "zz", "dependsOn": ["b"]}, {"component": "a", "dependsOn": []}]},
            "rules[1].dependsOn must not be empty",
        ),
        ({"rules": [{"component": "zz", "dependsOn": ["b"]}]}, 'references unknown component "zz"'),
        ({"rules": [{"component": "a", "dependsOn": ["b", "zz"]}]}, 'component "a" depends on unknown component "zz"'),
        ({"rules": [{"component": "a", "dependsOn": ["a"]}]}, 'component "a" cannot depend on itself'),
        (
            {"rules": [{"component": "web", "dependsOn": ["db"]}, {"component": "db", "dependsOn": ["web"]}]},
            "circular dependency detected: db -> web -> db",
        ),
        (
            {
                "rules": [
                    {"component": "a", "dependsOn": ["b"]},
                    {"component": "b", "dependsOn": ["c"]},
                    {"component": "c", "dependsOn": ["a"]},
                ]
            },
            "circular dependency detected: a -> b -> c -> a",
        ),
    ],
)
def test_dependency_refusals_name_the_policy_once(props: dict[str, Any], message: str) -> None:
    components = [*ABC, cm("web"), cm("db")]
    policies = [{"name": "order", "type": "dependency", "properties": props}]
    assert transform_error(components, policies) == f'policy "order": {message}'


def test_cycle_walk_reports_the_path_from_its_root() -> None:
    result = PolicyResult()
    pol = ApplicationPolicy(
        "p",
        "dependency",
        {
            "rules": [
                {"component": "x", "dependsOn": ["b"]},
                {"component": "b", "dependsOn": ["c"]},
                {"component": "c", "dependsOn": ["b"]},
            ]
        },
    )
    with pytest.raises(PolicyError) as info:
        DependencyPolicy().apply(pol, ["b", "c", "x"], result)
    assert str(info.value) == "circular dependency detected: b -> c -> b"
    assert result.dependencies == {}


def test_cycle_split_across_two_policies_is_reported_by_the_second() -> None:
    message = transform_error([cm("web"), cm("db")], [dep("first", ("web", ["db"])), dep("second", ("db", ["web"]))])
    assert message == 'policy "second": circular dependency detected: db -> web -> db'


def test_dependencies_accumulate_and_a_rejected_policy_records_nothing() -> None:
    handler = DependencyPolicy()
    result = PolicyResult()
    names = ["a", "b", "c", "d"]
    handler.apply(
        ApplicationPolicy("one", "dependency", {"rules": [{"component": "a", "dependsOn": ["b"]}]}), names, result
    )
    handler.apply(
        ApplicationPolicy("two", "dependency", {"rules": [{"component": "a", "dependsOn": ["c", "b"]}]}), names, result
    )
    assert result.dependencies == {"a": ["b", "c"]}
    rejected = ApplicationPolicy(
        "three",
        "dependency",
        {"rules": [{"component": "d", "dependsOn": ["a"]}, {"component": "c", "dependsOn": ["a"]}]},
    )
    with pytest.raises(PolicyError, match=r"^circular dependency detected: a -> c -> a$"):
        handler.apply(rejected, names, result)
    assert result.dependencies == {"a": ["b", "c"]}
    bad_name = ApplicationPolicy("four", "dependency", {"rules": [{"component": "d", "dependsOn": ["zz"]}]})
    with pytest.raises(PolicyError):
        handler.apply(bad_name, names, result)
    assert result.dependencies == {"a": ["b", "c"]}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"tier": "infra"}, "missing required property 'component'"),
        ({"component": "", "tier": "infra"}, "missing required property 'component'"),
        ({"component": 5, "tier": "infra"}, "missing required property 'component'"),
        ({"component": "a"}, "missing required property 'tier'"),
        ({"component": "a", "tier": 1}, "missing required property 'tier'"),
        ({"component": "a", "tier": "edge"}, 'unknown tier "edge" (valid: infra, services, apps)'),
        ({"component": "zz", "tier": "infra"}, 'references unknown component "zz"'),
    ],
)
def test_placement_refusals(props: dict[str, Any], message: str) -> None:
    policies = [{"name": "cache-in-infra", "type": "placement", "properties": props}]
    assert transform_error(ABC, policies) == f'policy "cache-in-infra": {message}'


def test_second_placement_in_another_tier_is_refused_same_tier_accepted() -> None:
    message = transform_error(ABC, [place("p1", "a", "infra"), place("p2", "a", "infra"), place("p3", "a", "apps")])
    assert message == (
        'policy "p3": component "a" is already placed in tier "infra" by an earlier placement policy, '
        'cannot also place it in "apps"'
    )
    result = run(document(ABC, [place("p1", "a", "infra"), place("p2", "a", "infra")]))
    assert result.policy_result.tier_overrides == {"a": "infra"}


@pytest.mark.parametrize("policy_type", ["reconciliation", "health-checks"])
def test_delivery_policies_fail_with_the_hint(policy_type: str) -> None:
    message = transform_error(ABC, [{"name": "flux", "type": policy_type}])
    assert message == f'no handler for policy type "{policy_type}" (policy "flux"): {HINT}'


@pytest.mark.parametrize("policy_type", ["app-dependency", "whatever"])
def test_other_unknown_policies_fail_plainly(policy_type: str) -> None:
    assert transform_error(ABC, [{"name": "x", "type": policy_type}]) == (
        f'no handler for policy type "{policy_type}" (policy "x")'
    )


class _Reconciliation:
    def can_handle(self, policy_type: str) -> bool:
        return policy_type == "reconciliation"

    def property_schema(self) -> Schema:
        return {}

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family="reconciliation")

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        result.extensions["example.com/reconciliation"] = {"interval": policy.properties.get("interval")}
        result.app_depends_on.append("other-app")


def test_a_consumer_handler_writes_extensions_that_come_back_unchanged() -> None:
    t = new_builtin_transformer()
    t.register_policy("reconciliation", _Reconciliation())
    text = document(ABC, [{"name": "r", "type": "reconciliation", "properties": {"interval": "5m"}}])
    result = run(text, t, validate=False)
    assert result.policy_result.extensions == {"example.com/reconciliation": {"interval": "5m"}}
    assert result.policy_result.app_depends_on == ["other-app"]
    assert result.cluster.node.name == ""  # app_depends_on orders nothing inside the application


def test_policy_result_starts_empty() -> None:
    result = PolicyResult()
    assert (result.tier_overrides, result.dependencies, result.app_depends_on, result.extensions) == ({}, {}, [], {})
    assert result.consumed_capabilities is None
    assert run(document(ABC)).policy_result == PolicyResult()


def test_handler_schemas_and_contracts_for_policies() -> None:
    t = new_builtin_transformer()
    schemas, contracts = t.handler_schemas(), t.handler_contracts()
    assert list(schemas.policies) == ["dependency", "placement"]
    assert list(contracts.policies) == ["dependency", "placement"]
    for name, contract in contracts.policies.items():
        assert contract == ContractMetadata(family=name, version="v1alpha1", required_capability_keys=[])
    for schema in schemas.policies.values():
        for path, node in walk_schema(schema):
            assert node.description, path
    assert [p for p, _ in walk_schema(schemas.policies["dependency"])] == [
        "rules",
        "rules[]",
        "rules[].component",
        "rules[].dependsOn",
        "rules[].dependsOn[]",
    ]


def test_register_policy_twice_or_for_a_type_it_does_not_claim() -> None:
    t = new_builtin_transformer()
    with pytest.raises(RegistrationError) as info:
        t.register_policy("dependency", DependencyPolicy())
    assert str(info.value) == "oam: policy handler already registered for type dependency"
    with pytest.raises(RegistrationError) as info:
        t.register_policy("tiers", PlacementPolicy())
    assert str(info.value) == "oam: policy handler does not claim type tiers"


def test_handlers_own_messages_do_not_name_the_policy() -> None:
    with pytest.raises(PolicyError) as info:
        PlacementPolicy().apply(ApplicationPolicy("p", "placement", {}), ["a"], PolicyResult())
    assert str(info.value) == "missing required property 'component'"


def test_validated_then_transformed_in_the_cli_order() -> None:
    t = new_builtin_transformer()
    app = parse(document(ABC, [place("p", "a", "infra")]), t)
    t.validate_authored_properties(app)
    assert t.transform(app, TransformContext()).policy_result.tier_overrides == {"a": "infra"}
