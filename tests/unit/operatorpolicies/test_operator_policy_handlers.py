"""The operator's own policy handlers (app-dependency, reconciliation, health-checks, topology, …), offline.

Through the transform's public API only: ``register_policy`` (via ``register_operator_policies``),
``validate_authored_properties`` and ``transform``; refusals name the policy once, like the
built-in policies' (docs/transform.md#policy-dispatch).
"""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.oam import OamError, TransformContext, Transformer, application_from_object, new_builtin_transformer
from oam_operator.oam.policies.result import PolicyResult
from oam_operator.operatorpolicies import (
    OPERATOR_POLICY_TYPES,
    AppRef,
    OperatorPolicies,
    ReconciliationSettings,
    ResolvedCheck,
    read_operator_policies,
    register_operator_policies,
)

SCHEMA = 'policy "hc" (type "health-checks"): properties.'
HINT = (
    "it configures delivery, which the transform leaves to the consumer that delivers the application; "
    "a consumer that delivers through Flux registers its own handler"
)


def document(*policies: dict[str, Any]) -> dict[str, Any]:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    return {
        "apiVersion": "oam-operator.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"components": [{"name": "c", "type": "passthrough", "properties": {"object": config}}],
                 "policies": list(policies)},
    }


def policy(name: str, type_: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "properties": properties}


def run(transformer: Transformer, doc: dict[str, Any]) -> PolicyResult:
    app = application_from_object(
        doc, component_types=transformer.component_types(), trait_types=transformer.trait_types()
    )
    transformer.validate_authored_properties(app)
    return transformer.transform(app, TransformContext(namespace="shop")).policy_result


def refusal(*policies: dict[str, Any]) -> str:
    with pytest.raises(OamError) as caught:
        run(register_operator_policies(new_builtin_transformer()), document(*policies))
    return caught.value.message


def operator() -> Transformer:
    return register_operator_policies(new_builtin_transformer())


def test_without_the_operator_handlers_the_types_are_refused_as_by_kurel() -> None:
    builtin = new_builtin_transformer()
    for type_, suffix in (("reconciliation", f": {HINT}"), ("health-checks", f": {HINT}"), ("app-dependency", ""),
                          ("topology", "")):
        with pytest.raises(OamError) as caught:
            run(builtin, document(policy("p", type_)))
        assert caught.value.message == f'no handler for policy type "{type_}" (policy "p"){suffix}'


def _walk_descriptions(type_: str, node: Any) -> None:
    assert node.description, f"{type_}: a schema node without description"
    for child in (node.properties or {}).values():
        _walk_descriptions(type_, child)
    if node.items is not None:
        _walk_descriptions(type_, node.items)


def test_registration_adds_exactly_the_operators_types_with_contracts() -> None:
    transformer = operator()
    assert transformer.policy_types() == ["app-dependency", "change-window", "dependency", "health-checks", "override",
                                          "placement", "reconciliation", "rollback", "rollout", "topology"]
    contracts = transformer.handler_contracts().policies
    for type_ in OPERATOR_POLICY_TYPES:
        assert (contracts[type_].family, contracts[type_].version) == (type_, "v1alpha1")
        schema = transformer.handler_schemas().policies[type_]

        for node in schema.values():
            _walk_descriptions(type_, node)
    with pytest.raises(OamError) as caught:
        register_operator_policies(transformer)
    assert caught.value.message == "oam: policy handler already registered for type app-dependency"


def test_app_dependency_is_recorded_in_order_and_deduplicated() -> None:
    result = run(operator(), document(
        policy("deps", "app-dependency", applications=[{"name": "db"}, {"name": "cache", "namespace": "infra"}]),
        policy("more", "app-dependency", applications=[{"name": "db"}, {"name": "queue"}]),
    ))
    assert result.app_depends_on == ["db", "infra/cache", "queue"]
    assert result.extensions["oam-operator.dev/app-dependency"] == [
        {"policy": "deps", "name": "db", "namespace": ""},
        {"policy": "deps", "name": "cache", "namespace": "infra"},
        {"policy": "more", "name": "queue", "namespace": ""},
    ]
    resolved = read_operator_policies(result, "shop", {}, allow_cross_namespace=True)
    assert resolved.depends_on == (AppRef("shop", "db"), AppRef("infra", "cache"), AppRef("shop", "queue"))


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({}, "missing required property 'applications'"),
        ({"applications": "db"}, "policy \"deps\" (type \"app-dependency\"): properties.applications: "
                                 "expected array, got string"),
        ({"applications": []}, "property 'applications' must not be empty"),
        ({"applications": [{"namespace": "x"}]},
         'policy "deps" (type "app-dependency"): properties.applications[0]: "name" is required'),
        ({"applications": [{"name": "Db_1"}]},
         'applications[0].name "Db_1" is not a valid Application name: a lowercase RFC 1123 subdomain must '
         "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ({"applications": [{"name": "db", "namespace": "a.b"}]}, None),
        ({"applications": [{"name": "db", "extra": 1}]},
         'policy "deps" (type "app-dependency"): properties.applications[0]: unsupported field "extra" '
         "(allowed: name, namespace)"),
    ],
)
def test_app_dependency_refusals(properties: dict[str, Any], message: str | None) -> None:
    text = refusal(policy("deps", "app-dependency", **properties))
    if message is None:
        assert text.startswith('policy "deps": applications[0].namespace "a.b" is not a valid namespace: ')
    elif message.startswith("policy "):
        assert text == message
    else:
        assert text == f'policy "deps": {message}'


def test_a_refused_app_dependency_records_nothing() -> None:
    result = PolicyResult()
    from oam_operator.oam import ApplicationPolicy
    from oam_operator.operatorpolicies import AppDependencyPolicy

    handler = AppDependencyPolicy()
    with pytest.raises(OamError):
        handler.apply(ApplicationPolicy("p", "app-dependency", {"applications": [{"name": "a"}, {}]}), [], result)
    assert (result.app_depends_on, result.extensions) == ([], {})


def test_cross_namespace_references_need_the_setting() -> None:
    result = run(operator(), document(
        policy("deps", "app-dependency", applications=[{"name": "db", "namespace": "shop"},
                                                       {"name": "cache", "namespace": "infra"}]),
    ))
    with pytest.raises(OamError) as caught:
        read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert caught.value.message == (
        'policy "deps": application "infra/cache" is in another namespace; cross-namespace references need the '
        "operator setting --allow-cross-namespace-dependencies"
    )
    result = run(operator(), document(
        policy("hc", "health-checks", checks=[{"apiVersion": "v1", "kind": "Service", "name": "lb",
                                               "namespace": "ingress"}]),
    ))
    with pytest.raises(OamError) as caught:
        read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert caught.value.message == (
        'policy "hc": health check Service "ingress/lb" is in another namespace; cross-namespace references need '
        "the operator setting --allow-cross-namespace-dependencies"
    )
    allowed = read_operator_policies(result, "shop", {}, allow_cross_namespace=True)
    assert allowed.health_checks == (ResolvedCheck("v1", "Service", "ingress", "lb"),)


def test_reconciliation_values_and_conflicts_with_the_spec() -> None:
    result = run(operator(), document(
        policy("sync", "reconciliation", interval="1m", timeout="15s", retryInterval="2s", suspend=False)))
    assert result.extensions["oam-operator.dev/reconciliation"] == {
        "policy": "sync", "interval": "1m", "timeout": "15s", "retryInterval": "2s", "suspend": False}
    resolved = read_operator_policies(result, "shop", {"suspend": False}, allow_cross_namespace=False)
    assert resolved == OperatorPolicies(
        (), ReconciliationSettings("sync", "1m", "15s", "2s", False), ())
    assert not resolved.suspend
    for key in ("interval", "timeout"):
        with pytest.raises(OamError) as caught:
            read_operator_policies(result, "shop", {key: "5m"}, allow_cross_namespace=False)
        assert caught.value.message == f'policy "sync": {key} is also set by spec.{key}; set it in one place only'


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({}, "at least one of interval, timeout, retryInterval, suspend must be set"),
        ({"interval": "10s"}, "interval must be at least 30s"),
        ({"timeout": "5s"}, "timeout must be at least 10s"),
        ({"retryInterval": "500ms"}, "retryInterval must be at least 1s"),
        ({"interval": "ten minutes"}, 'interval "ten minutes" is not a duration such as 30s, 10m or 1h30m'),
        ({"interval": "-1m"}, 'interval "-1m" is not a duration such as 30s, 10m or 1h30m'),
        ({"interval": "10m\n"}, r'interval "10m\n" is not a duration such as 30s, 10m or 1h30m'),
    ],
)
def test_reconciliation_refusals(properties: dict[str, Any], message: str) -> None:
    assert refusal(policy("sync", "reconciliation", **properties)) == f'policy "sync": {message}'


def test_reconciliation_typed_refusals_and_a_second_policy() -> None:
    assert refusal(policy("sync", "reconciliation", suspend="yes")) == (
        'policy "sync" (type "reconciliation"): properties.suspend: expected boolean, got string')
    assert refusal(policy("a", "reconciliation", interval="1m"), policy("b", "reconciliation", timeout="1m")) == (
        'policy "b": only one reconciliation policy is allowed; policy "a" already sets it')


def test_health_checks_accumulate_and_resolve_the_namespace() -> None:
    check = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingress"}
    result = run(operator(), document(
        policy("hc", "health-checks", checks=[check, {**check, "name": "db"}]),
        policy("hc2", "health-checks", checks=[check]),
    ))
    resolved = read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert resolved.health_checks == (ResolvedCheck("apps/v1", "Deployment", "shop", "ingress"),
                                      ResolvedCheck("apps/v1", "Deployment", "shop", "db"))
    assert resolved.health_checks[0].display("shop") == "Deployment ingress"
    assert ResolvedCheck("v1", "Service", "ingress", "lb").display("shop") == "Service ingress/lb"


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        (None, "missing required property 'checks'"),
        ([], "property 'checks' must not be empty"),
        ([{"kind": "Deployment", "name": "x"}], f'{SCHEMA}checks[0]: "apiVersion" is required'),
        ([{"apiVersion": "apps/v1/x", "kind": "Deployment", "name": "x"}],
         'checks[0].apiVersion "apps/v1/x" is not an API version (version or group/version)'),
        ([{"apiVersion": "apps/v1\n", "kind": "Deployment", "name": "x"}],
         r'checks[0].apiVersion "apps/v1\n" is not an API version (version or group/version)'),
        ([{"apiVersion": "v1", "name": "x"}], f'{SCHEMA}checks[0]: "kind" is required'),
        ([{"apiVersion": "v1", "kind": "Service"}], f'{SCHEMA}checks[0]: "name" is required'),
        ([{"apiVersion": "v1", "kind": "", "name": "x"}], "checks[0].kind is required and must be a string"),
        ([{"apiVersion": "v1", "kind": "Service", "name": "a/b"}], "checks[0].name \"a/b\" must not contain '/'"),
    ],
)
def test_health_check_refusals(checks: Any, message: str) -> None:
    properties = {} if checks is None else {"checks": checks}
    expected = message if message.startswith("policy ") else f'policy "hc": {message}'
    assert refusal(policy("hc", "health-checks", **properties)) == expected


CERT = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "current": "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"}


def test_health_expressions_are_read_with_their_policy_as_source() -> None:
    result = run(operator(), document(
        policy("hc", "health-checks", expressions=[{**CERT, "failed": "status.phase == 'Failed'"}]),
        policy("hc2", "health-checks", checks=[{"apiVersion": "v1", "kind": "Service", "name": "lb"}]),
    ))
    resolved = read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert [(r.kind, r.group, r.failed, r.source) for r in resolved.health_rules] == [
        ("Certificate", "cert-manager.io", "status.phase == 'Failed'", 'policy "hc"')]
    assert resolved.health_checks == (ResolvedCheck("v1", "Service", "shop", "lb"),)


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        ([policy("hc", "health-checks", expressions=[{**CERT, "current": "status.x ="}])],
         "policy \"hc\": expressions[0].current: 1:10: Syntax error: token recognition error at: '='"),
        ([policy("hc", "health-checks", expressions=[])], 'policy "hc": property \'expressions\' must be a non-empty list'),
        ([policy("hc", "health-checks", expressions=[{k: v for k, v in CERT.items() if k != "current"}])],
         f'{SCHEMA}expressions[0]: "current" is required'),
        ([policy("hc", "health-checks", expressions=[CERT]), policy("hc2", "health-checks", expressions=[CERT])],
         'policy "hc2": expressions: Certificate of group "cert-manager.io" has a rule in policy "hc" already'),
    ],
)
def test_health_expression_refusals(policies: list[dict[str, Any]], message: str) -> None:
    assert refusal(*policies) == message


def test_the_package_is_pure() -> None:
    """Like the transform: no kopf, no cluster client, nothing of the controller or the reconciler."""
    import subprocess
    import sys

    code = (
        "import sys, oam_operator.operatorpolicies\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('kopf', 'kubernetes', 'urllib3')"
        " or m.startswith(('oam_operator.controller', 'oam_operator.reconciler'))]\n"
        "print(','.join(sorted(bad)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
