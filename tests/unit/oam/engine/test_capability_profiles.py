"""ClusterProfile capabilities end to end (docs/transform.md#cluster-profiles-and-capabilities,
docs/transform.md#order-of-validation, docs/transform.md#errors-printed-by-build): ``oam-operator build --profile``.

Evaluation (docs/transform.md#evaluating-a-profile) validates and defaults renderings once per profile;
resolution (docs/transform.md#resolving-a-traits-properties) picks
the scoped or unscoped binding per trait, refuses capability-required traits without one and
authored platform-reserved keys, and merges the rendering under the authored properties at the
top level only (D10).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from oamkit.profiles import (
    LAUNCHER,
    NOT_FOUND,
    OURS,
    RESERVED,
    build,
    build_objects,
    capabilities,
    component,
    document,
    error,
    evaluation_error,
    find,
    profile_yaml,
    run,
    trait,
    webservice,
)

from oam_operator.oam import ClusterProfile, TransformContext, new_builtin_transformer, parse_application
from oam_operator.oam.document.document import CapabilityBinding

RULES = [{"host": "web.example.com", "paths": [{"path": "/"}]}]
CERT = {"secretName": "web-tls", "dnsNames": ["web.example.com"]}


@pytest.mark.parametrize("api_version", [LAUNCHER, OURS])
def test_profile_renderings_reach_the_traits(tmp_path: Path, api_version: str) -> None:
    app = document(
        webservice(
            "web",
            trait("expose", rules=RULES),
            trait("certificate", **CERT),
            trait("external-secret", secretName="creds", data=[{"secretKey": "TOKEN"}]),
        )
    )
    profile = profile_yaml(
        {
            "expose": {"controllerType": "ingress", "ingressClassName": "nginx"},
            "certificate": {"issuerRef": {"name": "letsencrypt-prod"}},
            "external-secret": {"secretStoreRef": {"name": "vault"}, "refreshInterval": "15m"},
        },
        api_version,
    )
    objs = build_objects(tmp_path, app, profile)
    assert find(objs, "Ingress")["spec"]["ingressClassName"] == "nginx"
    assert find(objs, "Certificate")["spec"]["issuerRef"] == {"name": "letsencrypt-prod", "kind": "ClusterIssuer"}
    es = find(objs, "ExternalSecret")["spec"]
    assert (es["secretStoreRef"], es["refreshInterval"]) == ({"name": "vault", "kind": "ClusterSecretStore"}, "15m0s")


def test_merge_is_top_level_only(tmp_path: Path) -> None:
    # ``ingress`` renderings pass through unvalidated; an authored key replaces the rendering's value whole
    profile = profile_yaml({"ingress": {"ingressClassName": "nginx", "annotations": {"platform": "yes", "x": "1"}}})
    app = document(webservice("web", trait("ingress", rules=RULES, annotations={"team": "a"})))
    ing = find(build_objects(tmp_path, app, profile), "Ingress")
    assert ing["metadata"]["annotations"] == {"team": "a"}
    assert ing["spec"]["ingressClassName"] == "nginx"
    app = document(webservice("web", trait("ingress", rules=RULES)))
    ing = find(build_objects(tmp_path, app, profile), "Ingress")
    assert ing["metadata"]["annotations"] == {"platform": "yes", "x": "1"}


def test_authored_null_replaces_the_rendering_value(tmp_path: Path) -> None:
    profile = profile_yaml({"ingress": {"ingressClassName": "nginx"}})
    app = document(webservice("web", trait("ingress", rules=RULES, ingressClassName=None)))
    assert "ingressClassName" not in find(build_objects(tmp_path, app, profile), "Ingress")["spec"]


def test_rendering_may_set_platform_reserved_keys_authors_may_not(tmp_path: Path) -> None:
    profile = profile_yaml({"ingress": {"allowedHostnameWildcard": "*.apps.example.com"}})
    app = document(webservice("web", trait("ingress", rules=RULES)))
    code, out, err, _, _ = build(tmp_path, app, profile)
    assert (code, out) == (1, "")
    assert err == (
        'Error: transforming application: component "web" trait "ingress": hostname "web.example.com" is not '
        'permitted by allowedHostnameWildcard "*.apps.example.com"\n'
    )
    for value in ("*.example.com", None):
        app = document(webservice("web", trait("ingress", rules=RULES, allowedHostnameWildcard=value)))
        code, out, err, _, _ = build(tmp_path, app, profile)
        assert (code, err) == (
            1,
            f'Error: transforming application: component "web" trait "ingress": properties: "allowedHostnameWildcard" {RESERVED}\n',
        )


def test_capability_required_traits_without_a_profile(tmp_path: Path) -> None:
    app = document(webservice("web", trait("certificate", **CERT)))
    code, _, err, _, _ = build(tmp_path, app)
    assert (code, err) == (
        1,
        f'Error: transforming application: component "web" trait "certificate": capability "certificate" {NOT_FOUND}\n',
    )
    app = document(webservice("web", trait("expose", rules=RULES, scope="public")))
    code, _, err, _, _ = build(tmp_path, app, profile_yaml({"certificate": {}}))
    assert (code, err) == (
        1,
        f'Error: transforming application: component "web" trait "expose": capability "expose.public" {NOT_FOUND}\n',
    )
    # traits that are not capability-required work without a profile
    app = document(webservice("web", trait("external-secret", secretName="creds", provider="aws")))
    assert find(build_objects(tmp_path, app), "ExternalSecret")["spec"]["secretStoreRef"]["name"] == "aws"


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        (
            {"configmap": {"x": 1}},
            'capability "configmap": configmap rendering: unsupported field "x" (allowed: (none))',
        ),
        (
            {"networkpolicy.strict": {"a": 1}},
            'capability "networkpolicy.strict": networkpolicy rendering: unsupported field "a" (allowed: (none))',
        ),
        (
            {"certificate.public": {}, "certificate": {"issuerRef": {}}},
            'capability "certificate": certificate rendering: issuerRef.name is required',
        ),
        (
            {"expose.a.b": {"controllerType": "gateway"}},
            'capability "expose.a.b": expose rendering: gatewayName is required when controllerType is "gateway"',
        ),
        (
            {"volsync": {"storageClassName": "x"}, "external-secret": {"secretStoreRef": {}}},
            'capability "external-secret": external-secret rendering: secretStoreRef.name is required',
        ),
    ],
)
def test_evaluation_errors_through_the_cli(tmp_path: Path, bindings: dict[str, Any], message: str) -> None:
    code, out, err, _, profile = build(tmp_path, document(webservice("web")), profile_yaml(bindings))
    assert (code, out, err) == (1, "", f'Error: evaluating profile "{profile}": {message}\n')


def test_evaluation_runs_in_sorted_key_order() -> None:
    assert evaluation_error({"volsync": {"x": 1}, "certificate": {"y": 1}}) == (
        'capability "certificate": certificate rendering: unsupported field "y" (allowed: issuerRef)'
    )


def test_profile_is_evaluated_before_authored_properties_are_checked(tmp_path: Path) -> None:
    app = document(webservice("web", trait("certificate", **CERT, bogus=1)))
    code, _, err, _, profile = build(tmp_path, app, profile_yaml({"certificate": {"issuer": "x"}}))
    assert (code, err) == (
        1,
        f'Error: evaluating profile "{profile}": capability "certificate": certificate rendering: unsupported field '
        '"issuer" (allowed: issuerRef)\n',
    )


def test_profile_document_errors(tmp_path: Path) -> None:
    app = document(webservice("web"))
    text = f"apiVersion: {LAUNCHER}\nkind: ClusterProfile\nmetadata:\n  name: p\nspec:\n  gitops: x\n"
    code, _, err, _, profile = build(tmp_path, app, text)
    assert (code, err) == (
        1,
        f'Error: parsing profile file "{profile}": parse error in ClusterProfile at line 6: unknown field "gitops" in spec\n',
    )
    text = f"apiVersion: {LAUNCHER}\nkind: ClusterProfile\nmetadata:\n  name: p\nspec:\n  gitopsEngine: argo\n"
    code, _, err, _, profile = build(tmp_path, app, text)
    assert (code, err) == (
        1,
        f'Error: parsing profile file "{profile}": unknown gitopsEngine "argo" (valid: fluxcd)\n',
    )
    for spec in ("spec: {}\n", "spec:\n  capabilities: {}\n"):
        text = f"apiVersion: {LAUNCHER}\nkind: ClusterProfile\nmetadata:\n  name: p\n{spec}"
        assert build(tmp_path, app, text)[0] == 0


def test_keys_of_other_types_pass_through_unchanged() -> None:
    bindings = {
        "ingress.internal": {"anything": {"goes": 1}},
        "mystery": {"x": 1},
        "scaler": {"minReplicas": 2},
        "rbac": {"whatever": True},
    }
    assert {k: v.rendering for k, v in capabilities(bindings).items()} == bindings


def test_evaluation_leaves_the_profile_untouched() -> None:
    raw = {"certificate": CapabilityBinding({"issuerRef": {"name": "ca"}})}
    profile = ClusterProfile(OURS, "ClusterProfile", "p", capabilities=raw)
    evaluated = new_builtin_transformer().evaluate_profile(profile)
    assert evaluated.capabilities["certificate"].rendering == {"issuerRef": {"name": "ca", "kind": "ClusterIssuer"}}
    assert raw["certificate"].rendering == {"issuerRef": {"name": "ca"}}
    assert (evaluated.name, evaluated.api_version) == ("p", OURS)


def test_renderings_are_copied_into_each_trait() -> None:
    caps = capabilities({"ingress": {"annotations": {"a": "1"}, "ingressClassName": "nginx"}})
    before = copy.deepcopy({k: v.rendering for k, v in caps.items()})
    t = new_builtin_transformer()
    text = document(webservice("a", trait("ingress", rules=RULES)), webservice("b", trait("ingress", rules=RULES)))
    app = parse_application(text, component_types=t.component_types(), trait_types=t.trait_types())
    objs = t.transform(app, TransformContext(capabilities=caps, component_label=False)).objects()
    ingresses = [o for o in objs if o["kind"] == "Ingress"]
    assert [i["metadata"]["annotations"] for i in ingresses] == [{"a": "1"}, {"a": "1"}]
    assert ingresses[0]["metadata"]["annotations"] is not ingresses[1]["metadata"]["annotations"]
    assert {k: v.rendering for k, v in caps.items()} == before


def test_consumed_capabilities_are_the_keys_actually_matched() -> None:
    bindings = {
        "certificate": {"issuerRef": {"name": "ca"}},
        "certificate.public": {"issuerRef": {"name": "le"}},
        "expose": {"controllerType": "ingress", "ingressClassName": "nginx"},
        "volsync": {"storageClassName": "fast"},
        "pvc": {},
    }
    text = document(
        webservice("web", trait("certificate", **CERT, scope="public"), trait("expose", rules=RULES)),
        webservice("api", trait("certificate", **{**CERT, "secretName": "api-tls"}, scope="nope"), port=9090),
        component(
            "db",
            "statefulset",
            trait("volsync", sourcePVC="data", schedule="@daily"),
            trait("certificate", **{**CERT, "secretName": "db-tls"}),
            image="postgres:16.2",
        ),
    )
    assert run(text, bindings).policy_result.consumed_capabilities == [
        "certificate",
        "certificate.public",
        "expose",
        "volsync",
    ]
    assert run(document(webservice("web")), bindings).policy_result.consumed_capabilities is None


def test_a_non_string_scope_is_refused_and_an_empty_one_is_unscoped() -> None:
    text = document(webservice("web", trait("certificate", **CERT, scope=3)))
    assert error(text, {"certificate": {}}) == (
        'component "web": trait "certificate": properties.scope: expected string, got int'
    )
    text = document(webservice("web", trait("certificate", **CERT, scope="")))
    result = run(text, {"certificate": {"issuerRef": {"name": "ca"}}})
    assert result.policy_result.consumed_capabilities == ["certificate"]
