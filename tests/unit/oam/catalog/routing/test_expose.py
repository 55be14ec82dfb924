"""The ``expose`` lowering rule (docs/transform.md#routing-traits, docs/transform.md#what-a-lowering-rule-is,
docs/transform.md#resolving-a-traits-properties): to ``ingress`` or ``httproute``, sealed."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.profiles import (
    NOT_FOUND,
    NS,
    RESERVED,
    capabilities,
    component,
    document,
    error,
    evaluation_error,
    find,
    kinds,
    objects,
    run,
    trait,
    webservice,
)

from oam_operator.oam import new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema

INGRESS = {"expose": {"controllerType": "ingress", "ingressClassName": "nginx"}}
GATEWAY = {"expose": {"controllerType": "gateway", "gatewayName": "public"}}
RULES = [{"host": "web.example.com", "paths": [{"path": "/"}]}]
CTX = 'component "web" trait "expose"'
NGINX = "nginx.ingress.kubernetes.io/"


def ingress_rendering(**extra: Any) -> dict[str, Any]:
    return {"expose": {**INGRESS["expose"], **extra}}


def gateway_rendering(**extra: Any) -> dict[str, Any]:
    return {"expose": {**GATEWAY["expose"], **extra}}


def exposed(bindings: dict[str, Any], kind: str = "Ingress", **props: Any) -> dict[str, Any]:
    return find(objects(document(webservice("web", trait("expose", **props))), bindings), kind)


def expose_error(bindings: dict[str, Any], validate: bool = True, **props: Any) -> str:
    return error(document(webservice("web", trait("expose", **props))), bindings, validate=validate)


def backend(port: int = 8080) -> dict[str, Any]:
    return {"service": {"name": "web", "port": {"number": port}}}


# --------------------------------------------------------------------------------------------
# controllerType: ingress


def test_lowers_to_an_ingress() -> None:
    result = run(document(webservice("web", trait("expose", rules=RULES))), INGRESS)
    objs = result.objects()
    assert kinds(objs)[-1] == ("Ingress", "web-ingress")
    assert objs[-1] == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web-ingress", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [
                {
                    "host": "web.example.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend()}]},
                }
            ],
        },
    }
    assert [a.name for a in result.cluster.applications()] == ["web", "web-ingress"]
    assert result.policy_result.consumed_capabilities == ["expose"]


def test_hostnames_expand_to_one_rule_per_host() -> None:
    spec = exposed(INGRESS, hostnames=["a.example.com", "b.example.com"])["spec"]
    assert spec["rules"] == [
        {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend()}]}}
        for host in ("a.example.com", "b.example.com")
    ]


def test_hostnames_with_rules_are_dropped_but_checked() -> None:
    bindings = ingress_rendering(allowedHostnameWildcard="*.example.com")
    spec = exposed(bindings, rules=RULES, hostnames=["other.example.com"])["spec"]
    assert [r["host"] for r in spec["rules"]] == ["web.example.com"]
    assert expose_error(bindings, rules=RULES, hostnames=["a.b.example.com"]) == (
        f'{CTX}: hostname "a.b.example.com" is not permitted by allowedHostnameWildcard "*.example.com"'
    )


@pytest.mark.parametrize(
    ("wildcard", "host", "allowed"),
    [
        ("*.apps.example.com", "shop.apps.example.com", True),
        ("*.apps.example.com", "a.shop.apps.example.com", False),
        ("*.apps.example.com", "apps.example.com", False),
        ("*.apps.example.com", "shop.example.com", False),
        ("shop.example.com", "shop.example.com", True),
        ("shop.example.com", "www.shop.example.com", False),
    ],
)
def test_allowed_hostname_wildcard(wildcard: str, host: str, allowed: bool) -> None:
    bindings = ingress_rendering(allowedHostnameWildcard=wildcard)
    for props in ({"hostnames": [host]}, {"rules": [{"host": host, "paths": [{}]}]}):
        if allowed:
            assert exposed(bindings, **props)["spec"]["rules"][0]["host"] == host
        else:
            assert expose_error(bindings, **props) == (
                f'{CTX}: hostname "{host}" is not permitted by allowedHostnameWildcard "{wildcard}"'
            )


def test_platform_managed_tls() -> None:
    bindings = ingress_rendering(certManagerClusterIssuer="letsencrypt")
    rules = [*RULES, {"host": "api.example.com", "paths": [{}]}, {"host": "web.example.com", "paths": [{"path": "/x"}]}]
    ing = exposed(bindings, rules=rules)
    assert ing["metadata"]["annotations"] == {"cert-manager.io/cluster-issuer": "letsencrypt"}
    assert ing["spec"]["tls"] == [{"hosts": ["web.example.com", "api.example.com"], "secretName": "web-tls"}]
    ing = exposed(
        bindings, rules=RULES, secretName="own-tls", annotations={"cert-manager.io/cluster-issuer": "letsencrypt"}
    )
    assert ing["spec"]["tls"] == [{"hosts": ["web.example.com"], "secretName": "own-tls"}]
    assert expose_error(bindings, rules=RULES, annotations={"cert-manager.io/cluster-issuer": "self-signed"}) == (
        f"{CTX}: annotation cert-manager.io/cluster-issuer is platform-managed by the expose trait and cannot be overridden"
    )
    assert expose_error(bindings, rules=RULES, secretName="") == f"{CTX}: secretName must be a non-empty string"
    assert expose_error(bindings, False, rules=RULES, secretName=5) == f"{CTX}: secretName must be a non-empty string"


def test_secret_name_needs_an_issuer_and_authored_tls_is_dropped() -> None:
    assert expose_error(INGRESS, rules=RULES, secretName="own-tls") == (
        f"{CTX}: secretName requires platform-managed TLS (no cert-manager cluster-issuer capability)"
    )
    text = document(webservice("web", trait("expose", rules=RULES, tls=[{"hosts": ["x"], "secretName": "s"}])))
    assert "tls" not in find(objects(text, INGRESS, validate=False), "Ingress")["spec"]
    assert error(text, INGRESS).startswith('component "web": trait "expose": properties: unsupported field "tls"')


def test_ssl_redirect_annotations() -> None:
    ing = exposed(INGRESS, rules=RULES, sslRedirect=True, forceSslRedirect=False)
    assert ing["metadata"]["annotations"] == {NGINX + "ssl-redirect": "true", NGINX + "force-ssl-redirect": "false"}
    rendered = exposed(ingress_rendering(sslRedirect=False), rules=RULES)
    assert rendered["metadata"]["annotations"] == {NGINX + "ssl-redirect": "false"}
    # the typed setting replaces an authored annotation of the same key; authored wins over the rendering
    ing = exposed(
        ingress_rendering(sslRedirect=False),
        rules=RULES,
        sslRedirect=True,
        annotations={NGINX + "ssl-redirect": "no", "a": 1},
    )
    assert ing["metadata"]["annotations"] == {NGINX + "ssl-redirect": "true", "a": "1"}
    assert expose_error(INGRESS, False, rules=RULES, sslRedirect="yes") == f"{CTX}: sslRedirect must be a boolean"


def test_ext_auth() -> None:
    bindings = ingress_rendering(
        authURL="https://auth.example.com/oauth2/auth",
        authSigninURL="https://auth.example.com/oauth2/start",
        authResponseHeaders=["X-Auth-Request-User", "X-Auth-Request-Email"],
    )
    ing = exposed(bindings, rules=RULES, allowedGroups=["admins", "devs"])
    assert ing["metadata"]["annotations"] == {
        NGINX + "auth-url": "https://auth.example.com/oauth2/auth?allowed_groups=admins,devs",
        NGINX + "auth-signin": "https://auth.example.com/oauth2/start",
        NGINX + "auth-response-headers": "X-Auth-Request-User,X-Auth-Request-Email",
    }
    # without allowedGroups the auth settings are dropped
    assert "annotations" not in exposed(bindings, rules=RULES)["metadata"]
    bare = ingress_rendering(authURL="https://auth.example.com/check", authResponseHeaders="X-User")
    ing = exposed(bare, rules=RULES, allowedGroups=["ops"])
    assert ing["metadata"]["annotations"] == {
        NGINX + "auth-url": "https://auth.example.com/check?allowed_groups=ops",
        NGINX + "auth-response-headers": "X-User",
    }
    assert expose_error(bindings, rules=RULES, allowedGroups=[]) == (
        f"{CTX}: allowedGroups must not be empty (ext-auth requires at least one group)"
    )
    assert expose_error(INGRESS, rules=RULES, allowedGroups=["admins"]) == (
        f"{CTX}: ext-auth is not offered on this platform (the expose capability has no authURL)"
    )
    assert expose_error(bindings, rules=RULES, allowedGroups=["a", ""]) == (
        f"{CTX}: allowedGroups entries must be non-empty strings"
    )


def test_authored_properties_pass_to_the_ingress() -> None:
    comp = component(
        "chart",
        "helm",
        trait(
            "expose", rules=RULES, servicePort=8443, serviceName="chart-svc", name="public", ingressClassName="internal"
        ),
        source={"url": "https://charts.example.com"},
        chart="app",
    )
    ing = find(objects(document(comp), INGRESS), "Ingress")
    assert ing["metadata"]["name"] == "public"
    assert ing["spec"]["ingressClassName"] == "internal"
    assert ing["spec"]["rules"][0]["http"]["paths"][0]["backend"] == {
        "service": {"name": "chart-svc", "port": {"number": 8443}}
    }


def test_scope_selects_the_binding_and_names_the_ingress() -> None:
    bindings = {**INGRESS, "expose.internal": {"controllerType": "ingress", "ingressClassName": "internal-nginx"}}
    result = run(document(webservice("web", trait("expose", rules=RULES, scope="internal"))), bindings)
    ing = find(result.objects(), "Ingress")
    assert (ing["metadata"]["name"], ing["spec"]["ingressClassName"]) == ("web-ingress-internal", "internal-nginx")
    assert result.policy_result.consumed_capabilities == ["expose.internal"]
    result = run(document(webservice("web", trait("expose", rules=RULES, scope="other"))), bindings)
    assert find(result.objects(), "Ingress")["spec"]["ingressClassName"] == "nginx"
    assert result.policy_result.consumed_capabilities == ["expose"]


def test_emitted_traits_are_sealed() -> None:
    # an ``ingress`` binding would refuse the host; the emitted ingress never sees it
    bindings = {**INGRESS, "ingress": {"allowedHostnameWildcard": "*.other.com", "ingressClassName": "x"}}
    result = run(document(webservice("web", trait("expose", rules=RULES))), bindings)
    ing = find(result.objects(), "Ingress")
    assert ing["spec"]["ingressClassName"] == "nginx"
    assert result.policy_result.consumed_capabilities == ["expose"]


def test_network_policy_rendering_reaches_the_synthesis() -> None:
    bindings = ingress_rendering(networkPolicy={"trafficSources": [{"namespace": "ingress-nginx"}]})
    objs = objects(document(webservice("web", trait("expose", rules=RULES))), bindings)
    policy = find(objs, "NetworkPolicy", "web-allow-ingress-traffic")
    assert policy["spec"]["ingress"] == [
        {
            "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}],
            "ports": [{"port": 8080, "protocol": "TCP"}],
        }
    ]


def test_emitted_ingress_is_checked_against_its_schema() -> None:
    assert expose_error(INGRESS, annotations={"a": "b"}) == (
        f'{CTX}: emitted trait "ingress": properties: "rules" is required'
    )
    assert expose_error(INGRESS, rules=[{"paths": [{}]}]) == (
        f'{CTX}: emitted trait "ingress": properties.rules[0]: "host" is required'
    )


# --------------------------------------------------------------------------------------------
# controllerType: gateway


def test_lowers_to_an_httproute() -> None:
    rules = [{"matches": [{"path": {"value": "/api"}}]}]
    result = run(document(webservice("web", trait("expose", hostnames=["web.example.com"], rules=rules))), GATEWAY)
    route = result.objects()[-1]
    assert route == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web-httproute", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "parentRefs": [{"name": "public", "namespace": "gateway-system"}],
            "hostnames": ["web.example.com"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/api"}}],
                    "backendRefs": [{"name": "web", "port": 8080}],
                }
            ],
        },
    }
    assert result.policy_result.consumed_capabilities == ["expose"]


def test_gateway_namespace_and_annotations() -> None:
    route = exposed(gateway_rendering(gatewayNamespace="edge"), "HTTPRoute", rules=[{}], annotations={"team": "a"})
    assert route["spec"]["parentRefs"] == [{"name": "public", "namespace": "edge"}]
    assert route["metadata"]["annotations"] == {"team": "a"}
    assert "hostnames" not in route["spec"]


def test_gateway_hostnames_must_match_the_wildcard() -> None:
    bindings = gateway_rendering(allowedHostnameWildcard="*.apps.example.com")
    assert exposed(bindings, "HTTPRoute", hostnames=["a.apps.example.com"], rules=[{}])["spec"]["hostnames"] == [
        "a.apps.example.com"
    ]
    assert expose_error(bindings, hostnames=["a.example.com"], rules=[{}]) == (
        f'{CTX}: hostname "a.example.com" is not permitted by allowedHostnameWildcard "*.apps.example.com"'
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("sslRedirect", True),
        ("forceSslRedirect", False),
        ("allowedGroups", ["admins"]),
        ("authSigninURL", "https://auth.example.com/start"),
        ("secretName", "web-tls"),
        ("ingressClassName", "nginx"),
    ],
)
def test_gateway_refuses_ingress_only_keys(key: str, value: Any) -> None:
    assert expose_error(GATEWAY, rules=[{}], **{key: value}) == (
        f'{CTX}: {key} is only valid when controllerType is "ingress"'
    )


def test_gateway_needs_rules() -> None:
    assert expose_error(GATEWAY, hostnames=["web.example.com"]) == (
        f'{CTX}: emitted trait "httproute": properties: "rules" is required'
    )


# --------------------------------------------------------------------------------------------
# capabilities, reserved keys, renderings


def test_capability_is_required() -> None:
    text = document(webservice("web", trait("expose", rules=RULES)))
    assert error(text, {}) == f'{CTX}: capability "expose" {NOT_FOUND}'
    assert error(text, {"ingress": {}}) == f'{CTX}: capability "expose" {NOT_FOUND}'
    scoped = document(webservice("web", trait("expose", rules=RULES, scope="gw")))
    assert error(scoped, {}) == f'{CTX}: capability "expose.gw" {NOT_FOUND}'
    assert find(objects(scoped, GATEWAY | {"expose.gw": GATEWAY["expose"]}), "HTTPRoute")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("controllerType", "ingress"),
        ("certManagerClusterIssuer", "letsencrypt"),
        ("allowedHostnameWildcard", "*.example.com"),
        ("gatewayName", "public"),
        ("gatewayNamespace", "edge"),
        ("authURL", "https://auth.example.com"),
        ("authResponseHeaders", ["X-User"]),
        ("networkPolicy", {"trafficSources": []}),
        ("controllerType", None),
    ],
)
@pytest.mark.parametrize("validate", [True, False])
def test_platform_reserved_keys_are_refused(key: str, value: Any, validate: bool) -> None:
    assert expose_error(INGRESS, validate, rules=RULES, **{key: value}) == f'{CTX}: properties: "{key}" {RESERVED}'


def test_reserved_check_comes_before_the_missing_binding_only_in_validation() -> None:
    # validate_authored_properties (pipeline step 4) runs before the transform's order of
    # docs/transform.md#resolving-a-traits-properties
    assert expose_error({}, True, rules=RULES, gatewayName="x") == f'{CTX}: properties: "gatewayName" {RESERVED}'
    assert expose_error({}, False, rules=RULES, gatewayName="x") == f'{CTX}: capability "expose" {NOT_FOUND}'


def test_rendering_defaults() -> None:
    assert capabilities(GATEWAY)["expose"].rendering == {
        "controllerType": "gateway",
        "gatewayName": "public",
        "gatewayNamespace": "gateway-system",
    }
    assert capabilities(INGRESS)["expose"].rendering == INGRESS["expose"]


ALLOWED = (
    "allowedHostnameWildcard, authResponseHeaders, authSigninURL, authURL, certManagerClusterIssuer, controllerType, "
    "forceSslRedirect, gatewayName, gatewayNamespace, ingressClassName, networkPolicy, sslRedirect"
)


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "tls": True},
            f'unsupported field "tls" (allowed: {ALLOWED})',
        ),
        ({}, "controllerType is required"),
        ({"ingressClassName": "nginx"}, "controllerType is required"),
        ({"controllerType": "traefik"}, 'controllerType "traefik" is not supported (want "ingress" or "gateway")'),
        ({"controllerType": 1}, 'controllerType "1" is not supported (want "ingress" or "gateway")'),
        ({"controllerType": "ingress"}, 'ingressClassName is required when controllerType is "ingress"'),
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "authURL": "https://a/check?x=1"},
            "authURL must be a base URL without a query string",
        ),
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "authSigninURL": "https://a/start"},
            "authSigninURL and authResponseHeaders require authURL",
        ),
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "authResponseHeaders": ["X"]},
            "authSigninURL and authResponseHeaders require authURL",
        ),
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "gatewayName": "g"},
            'gatewayName and gatewayNamespace are only valid when controllerType is "gateway"',
        ),
        (
            {"controllerType": "ingress", "ingressClassName": "nginx", "gatewayNamespace": "g"},
            'gatewayName and gatewayNamespace are only valid when controllerType is "gateway"',
        ),
        ({"controllerType": "gateway"}, 'gatewayName is required when controllerType is "gateway"'),
        (
            {"controllerType": "gateway", "gatewayName": "g", "ingressClassName": "nginx"},
            'ingressClassName is only valid when controllerType is "ingress"',
        ),
        (
            {"controllerType": "gateway", "gatewayName": "g", "certManagerClusterIssuer": "le"},
            'certManagerClusterIssuer is only valid when controllerType is "ingress"',
        ),
        (
            {"controllerType": "gateway", "gatewayName": "g", "forceSslRedirect": True},
            'sslRedirect and forceSslRedirect are only valid when controllerType is "ingress"',
        ),
        (
            {"controllerType": "gateway", "gatewayName": "g", "authURL": "https://a"},
            'authURL, authSigninURL and authResponseHeaders are only valid when controllerType is "ingress"',
        ),
        ({"controllerType": "ingress", "ingressClassName": 5}, "ingressClassName must be a string"),
        (
            {"controllerType": "ingress", "ingressClassName": "n", "sslRedirect": "true"},
            "sslRedirect must be a boolean",
        ),
        (
            {"controllerType": "ingress", "ingressClassName": "n", "authURL": "https://a", "authResponseHeaders": [1]},
            "authResponseHeaders must be a string or a list of strings",
        ),
    ],
)
def test_rendering_messages(rendering: dict[str, Any], message: str) -> None:
    assert evaluation_error({"expose.edge": rendering}) == f'capability "expose.edge": expose rendering: {message}'


@pytest.mark.parametrize(
    ("rendering", "props", "message"),
    [
        ({}, {"rules": RULES}, "controllerType is required"),
        (
            {"controllerType": "istio"},
            {"rules": RULES},
            'controllerType "istio" is not supported (want "ingress" or "gateway")',
        ),
        (
            {"controllerType": "ingress"},
            {"rules": RULES},
            'ingressClassName is required when controllerType is "ingress"',
        ),
        ({"controllerType": "gateway"}, {"rules": [{}]}, 'gatewayName is required when controllerType is "gateway"'),
    ],
)
def test_unevaluated_renderings_are_checked_when_lowering(
    rendering: dict[str, Any], props: dict[str, Any], message: str
) -> None:
    text = document(webservice("web", trait("expose", **props)))
    assert error(text, {"expose": rendering}, evaluate=False) == f"{CTX}: {message}"


def test_unevaluated_gateway_rendering_defaults_the_namespace() -> None:
    text = document(webservice("web", trait("expose", rules=[{}])))
    route = find(objects(text, GATEWAY, evaluate=False), "HTTPRoute")
    assert route["spec"]["parentRefs"] == [{"name": "public", "namespace": "gateway-system"}]


def test_contract_and_schema() -> None:
    t = new_builtin_transformer()
    contract = t.handler_contracts().traits["expose"]
    assert (contract.family, contract.version, contract.required_capability_keys) == ("expose", "v1alpha1", ["expose"])
    schema = t.handler_schemas().traits["expose"]
    assert [p for p, node in walk_schema(schema) if not node.description] == []
    assert sorted(k for k, v in schema.items() if v.platform_reserved) == [
        "allowedHostnameWildcard",
        "authResponseHeaders",
        "authURL",
        "certManagerClusterIssuer",
        "controllerType",
        "gatewayName",
        "gatewayNamespace",
        "networkPolicy",
    ]
    assert sorted(k for k, v in schema.items() if not v.platform_reserved) == [
        "allowedGroups",
        "annotations",
        "authSigninURL",
        "forceSslRedirect",
        "hostnames",
        "ingressClassName",
        "name",
        "rules",
        "scope",
        "secretName",
        "serviceName",
        "servicePort",
        "sslRedirect",
    ]
    assert schema["gatewayNamespace"].default == "gateway-system"
    assert "expose" in t.trait_types()
