"""The ``httproute`` trait (docs/transform.md#routing-traits): parentRefs, matches, backends, filters, timeouts."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import (
    NS,
    capabilities,
    document,
    error,
    find,
    kinds,
    objects,
    trait,
    trait_error,
    webservice,
    worker,
)

PARENT = [{"name": "gw"}]
RULE: dict[str, Any] = {"matches": [{"path": {"value": "/"}}]}


def route(component: dict[str, Any], caps: Any = None) -> dict[str, Any]:
    return find(objects(document(component), caps), "HTTPRoute")


def rules_of(rules: list[Any], **props: Any) -> list[Any]:
    props.setdefault("parentRefs", PARENT)
    out: list[Any] = route(webservice("web", trait("httproute", rules=rules, **props), port=8080))["spec"]["rules"]
    return out


def test_minimal_route_object_and_position() -> None:
    text = document(webservice("web", trait("httproute", parentRefs=PARENT, rules=[RULE])))
    assert kinds(text)[-1] == ("HTTPRoute", "web-httproute")
    assert find(objects(text), "HTTPRoute") == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web-httproute", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "parentRefs": [{"name": "gw"}],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": "web", "port": 80}],
                }
            ],
        },
    }


def test_parent_refs_hostnames_annotations_and_names() -> None:
    obj = route(
        webservice(
            "web",
            trait(
                "httproute",
                parentRefs=[{"name": "gw", "namespace": "infra"}, {"name": "gw2"}],
                hostnames=["a.example.com", "b.example.com"],
                annotations={"x": 1},
                rules=[{}],
                scope="public",
            ),
        )
    )
    assert obj["metadata"]["name"] == "web-httproute-public"
    assert obj["metadata"]["annotations"] == {"x": "1"}
    assert obj["spec"]["parentRefs"] == [{"name": "gw", "namespace": "infra"}, {"name": "gw2"}]
    assert obj["spec"]["hostnames"] == ["a.example.com", "b.example.com"]
    assert obj["spec"]["rules"] == [{"backendRefs": [{"name": "web", "port": 80}]}]
    named = route(webservice("web", trait("httproute", parentRefs=PARENT, rules=[{}], name="api", scope="x")))
    assert named["metadata"]["name"] == "api"


def test_parent_refs_are_synthesised_from_the_gateway() -> None:
    obj = route(webservice("web", trait("httproute", gatewayName="public", rules=[{}])))
    assert obj["spec"]["parentRefs"] == [{"name": "public", "namespace": "gateway-system"}]
    obj = route(webservice("web", trait("httproute", gatewayName="public", gatewayNamespace="edge", rules=[{}])))
    assert obj["spec"]["parentRefs"] == [{"name": "public", "namespace": "edge"}]
    caps = capabilities(httproute={"gatewayName": "platform-gw"})
    obj = route(webservice("web", trait("httproute", rules=[{}])), caps)
    assert obj["spec"]["parentRefs"] == [{"name": "platform-gw", "namespace": "gateway-system"}]
    authored = route(webservice("web", trait("httproute", parentRefs=PARENT, rules=[{}])), caps)
    assert authored["spec"]["parentRefs"] == [{"name": "gw"}]


def test_match_defaults_and_headers() -> None:
    rules = [
        {
            "matches": [
                {"path": {}},
                {"path": {"type": "Exact", "value": "/x"}, "headers": [{"name": "v", "value": 2}]},
                {"headers": [{"name": "h", "value": "a.*", "type": "RegularExpression"}], "method": "GET"},
            ]
        }
    ]
    assert rules_of(rules)[0]["matches"] == [
        {"path": {"type": "PathPrefix", "value": "/"}},
        {"path": {"type": "Exact", "value": "/x"}, "headers": [{"name": "v", "value": "2", "type": "Exact"}]},
        {"headers": [{"name": "h", "value": "a.*", "type": "RegularExpression"}], "method": "GET"},
    ]


def test_backend_refs_defaults_and_explicit_backends() -> None:
    rules = [
        {"backendRefs": [{}, {"port": 8080}, {"name": "web"}, {"name": "other"}, {"name": "other", "port": 9}]},
        {"backendRefs": [{"name": "canary", "port": 80, "weight": 10}]},
        {"backendRefs": []},
    ]
    assert rules_of(rules) == [
        {
            "backendRefs": [
                {"name": "web", "port": 8080},
                {"name": "web", "port": 8080},
                {"name": "web", "port": 8080},
                {"name": "other"},
                {"name": "other", "port": 9},
            ]
        },
        {"backendRefs": [{"name": "canary", "port": 80, "weight": 10}]},
        {"backendRefs": [{"name": "web", "port": 8080}]},
    ]


def test_service_port_and_name_for_a_component_without_service_port() -> None:
    obj = route(worker("jobs", trait("httproute", parentRefs=PARENT, rules=[{}], servicePort=7000)))
    assert obj["spec"]["rules"] == [{"backendRefs": [{"name": "jobs", "port": 7000}]}]
    obj = route(worker("jobs", trait("httproute", parentRefs=PARENT, rules=[{}], servicePort=7000, serviceName="s")))
    assert obj["spec"]["rules"] == [{"backendRefs": [{"name": "s", "port": 7000}]}]


FILTERS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301.0, "port": 443}},
        {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301, "port": 443}},
    ),
    (
        {
            "type": "RequestRedirect",
            "requestRedirect": {
                "hostname": "b.example.com",
                "path": {"type": "ReplaceFullPath", "replaceFullPath": "/"},
            },
        },
        {
            "type": "RequestRedirect",
            "requestRedirect": {
                "hostname": "b.example.com",
                "path": {"type": "ReplaceFullPath", "replaceFullPath": "/"},
            },
        },
    ),
    (
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/v2"}}},
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/v2"}}},
    ),
    (
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {"set": [{"name": "a", "value": "1"}], "add": [{"name": "b"}], "remove": ["c"]},
        },
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {
                "set": [{"name": "a", "value": "1"}],
                "add": [{"name": "b", "value": ""}],
                "remove": ["c"],
            },
        },
    ),
    (
        {"type": "ResponseHeaderModifier", "responseHeaderModifier": {"remove": ["server"]}},
        {"type": "ResponseHeaderModifier", "responseHeaderModifier": {"remove": ["server"]}},
    ),
    (
        {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "shadow", "port": 80}, "percent": 10}},
        {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "shadow", "port": 80}, "percent": 10}},
    ),
    (
        {
            "type": "RequestMirror",
            "requestMirror": {"backendRef": {"name": "shadow", "port": 80}, "fraction": {"numerator": 1}},
        },
        {
            "type": "RequestMirror",
            "requestMirror": {"backendRef": {"name": "shadow", "port": 80}, "fraction": {"numerator": 1}},
        },
    ),
    (
        {"type": "CORS", "cors": {"allowOrigins": ["https://a"], "allowCredentials": True, "maxAge": 60}},
        {"type": "CORS", "cors": {"allowOrigins": ["https://a"], "allowCredentials": True, "maxAge": 60}},
    ),
    (
        {
            "type": "ExternalAuth",
            "externalAuth": {
                "protocol": "HTTP",
                "backendRef": {"name": "auth", "port": 8080},
                "http": {"path": "/check", "allowedHeaders": ["x"]},
                "forwardBody": {"maxSize": 0},
            },
        },
        {
            "type": "ExternalAuth",
            "externalAuth": {
                "protocol": "HTTP",
                "backendRef": {"name": "auth", "port": 8080},
                "http": {"path": "/check", "allowedHeaders": ["x"]},
                "forwardBody": {},
            },
        },
    ),
    (
        {
            "type": "ExternalAuth",
            "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "a", "port": 1}, "forwardBody": {"maxSize": 8}},
        },
        {
            "type": "ExternalAuth",
            "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "a", "port": 1}, "forwardBody": {"maxSize": 8}},
        },
    ),
    (
        {
            "type": "ExternalAuth",
            "externalAuth": {
                "protocol": "GRPC",
                "backendRef": {"name": "auth", "port": 9000},
                "grpc": {"allowedHeaders": ["y"]},
            },
        },
        {
            "type": "ExternalAuth",
            "externalAuth": {
                "protocol": "GRPC",
                "backendRef": {"name": "auth", "port": 9000},
                "grpc": {"allowedHeaders": ["y"]},
            },
        },
    ),
]


@pytest.mark.parametrize(("authored", "emitted"), FILTERS)
def test_filters(authored: dict[str, Any], emitted: dict[str, Any]) -> None:
    assert rules_of([{"filters": [authored]}]) == [
        {"backendRefs": [{"name": "web", "port": 8080}], "filters": [emitted]}
    ]


def test_timeouts_print_as_go_durations() -> None:
    rules = [{"timeouts": {"request": "90s", "backendRequest": "1m"}}, {"timeouts": {"backendRequest": "500ms"}}]
    out = rules_of(rules)
    assert out[0]["timeouts"] == {"request": "1m30s", "backendRequest": "1m0s"}
    assert out[1]["timeouts"] == {"backendRequest": "500ms"}
    assert rules_of([{"timeouts": {"request": "0s", "backendRequest": "1h"}}])[0]["timeouts"] == {
        "request": "0s",
        "backendRequest": "1h0m0s",
    }


def _filter(f: Any) -> dict[str, Any]:
    return {"filters": [f]}


REDIRECT = '"RequestRedirect": '


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"rules": [{}]},
            "required property 'parentRefs' missing or empty (and no gatewayName capability to synthesize from)",
        ),
        (
            {"rules": [{}], "parentRefs": []},
            "required property 'parentRefs' missing or empty (and no gatewayName capability to synthesize from)",
        ),
        (
            {"rules": [{}], "parentRefs": [{"name": "a"}, {"namespace": "x"}]},
            "parentRefs[1]: required field 'name' missing or not a string",
        ),
        ({"rules": [{}], "parentRefs": PARENT, "hostnames": ["a", 2]}, "hostnames entries must be strings"),
        ({"parentRefs": PARENT}, "required property 'rules' missing or empty"),
        ({"parentRefs": PARENT, "rules": []}, "required property 'rules' missing or empty"),
        (
            {"parentRefs": PARENT, "rules": [{}], "servicePort": 8080},
            "servicePort may not be set on a component that already exposes service port 80; use path-level 'port' or 'backend' overrides instead",
        ),
        ({"parentRefs": PARENT, "rules": [{}], "servicePort": -1}, "servicePort must be a valid port number (1–65535)"),
        (
            {"parentRefs": PARENT, "rules": [{}], "serviceName": "s"},
            "serviceName requires a valid servicePort to also be set on the trait",
        ),
        (
            {"parentRefs": PARENT, "rules": [{"matches": [{"headers": [{"value": "v"}]}]}]},
            "rules[0].matches[0].headers[0]: required field 'name' missing",
        ),
        (
            {"parentRefs": PARENT, "rules": [{}, {"matches": [{}, {"headers": [{"name": "n"}]}]}]},
            "rules[1].matches[1].headers[0]: required field 'value' missing",
        ),
        (
            {"parentRefs": PARENT, "rules": [{"backendRefs": [{"port": 9000}]}]},
            "rules[0].backendRefs[0]: cannot route implicit backend to port 9000 — component service exposes port 80; "
            "specify an explicit backend name or match the component port",
        ),
        (
            {
                "parentRefs": PARENT,
                "rules": [_filter({"type": "RequestRedirect", "requestRedirect": {"statusCode": 300}})],
            },
            f"rules[0].filters[0] {REDIRECT}statusCode: unknown statusCode 300 (valid: 301, 302, 303, 307, 308)",
        ),
        (
            {"parentRefs": PARENT, "rules": [_filter({"type": "ExtensionRef"})]},
            'rules[0].filters[0] "ExtensionRef": filter type "ExtensionRef" is not implemented',
        ),
        (
            {"parentRefs": PARENT, "rules": [_filter({"type": "Magic"})]},
            'rules[0].filters[0] "Magic": unknown filter type "Magic"',
        ),
        ({"parentRefs": PARENT, "rules": [_filter({})]}, "rules[0].filters[0]: type is required"),
        (
            {"parentRefs": PARENT, "rules": [{"timeouts": {"request": "10s", "backendRequest": "20s"}}]},
            "rules[0].timeouts: backendRequest (20s) must be <= request (10s)",
        ),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert (
        trait_error(webservice("web", trait("httproute", **props))) == f'component "web" trait "httproute": {message}'
    )


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (
            {"type": "RequestRedirect"},
            '"RequestRedirect": requestRedirect must set at least one of scheme, hostname, port, statusCode, path',
        ),
        (
            {"type": "RequestRedirect", "requestRedirect": {"scheme": "ftp"}},
            '"RequestRedirect": scheme: unknown scheme "ftp" (valid: http, https)',
        ),
        (
            {"type": "RequestRedirect", "requestRedirect": {"port": 0}},
            '"RequestRedirect": port 0 must be between 1 and 65535',
        ),
        (
            {"type": "RequestRedirect", "requestRedirect": {"statusCode": "301"}},
            '"RequestRedirect": statusCode must be an integer',
        ),
        ({"type": "RequestRedirect", "requestRedirect": {"path": {}}}, '"RequestRedirect": path.type is required'),
        (
            {"type": "RequestRedirect", "requestRedirect": {"path": {"type": "Replace"}}},
            '"RequestRedirect": path.type: unknown type "Replace" (valid: ReplaceFullPath, ReplacePrefixMatch); did you mean "ReplaceFullPath"?',
        ),
        (
            {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplaceFullPath"}}},
            '"URLRewrite": path.replaceFullPath is required when type is ReplaceFullPath',
        ),
        ({"type": "URLRewrite", "urlRewrite": {}}, '"URLRewrite": urlRewrite must set at least one of hostname, path'),
        ({"type": "URLRewrite", "urlRewrite": {"x": 1}}, '"URLRewrite": urlRewrite: unsupported field "x"'),
        ({"type": "URLRewrite", "requestRedirect": {}}, '"URLRewrite": unsupported field "requestRedirect"'),
        (
            {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"value": "v"}]}},
            '"RequestHeaderModifier": set[0].name is required',
        ),
        (
            {"type": "ResponseHeaderModifier", "responseHeaderModifier": {}},
            '"ResponseHeaderModifier": responseHeaderModifier must set at least one of set, add, remove',
        ),
        ({"type": "RequestMirror", "requestMirror": {}}, '"RequestMirror": backendRef is required'),
        (
            {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "s"}}},
            '"RequestMirror": backendRef.port is required',
        ),
        (
            {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "s", "port": 1}, "percent": 101}},
            '"RequestMirror": percent 101 must be between 0 and 100',
        ),
        (
            {
                "type": "RequestMirror",
                "requestMirror": {
                    "backendRef": {"name": "s", "port": 1},
                    "fraction": {"numerator": 1, "denominator": 0},
                },
            },
            '"RequestMirror": fraction.denominator 0 must be >= 1',
        ),
        (
            {
                "type": "RequestMirror",
                "requestMirror": {"backendRef": {"name": "s", "port": 1}, "fraction": {"denominator": 2}},
            },
            '"RequestMirror": fraction.numerator is required',
        ),
        (
            {
                "type": "RequestMirror",
                "requestMirror": {"backendRef": {"name": "s", "port": 1}, "fraction": {"numerator": -1}},
            },
            '"RequestMirror": fraction.numerator -1 must be >= 0',
        ),
        (
            {"type": "CORS", "cors": {}},
            '"CORS": cors must set at least one of allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials, maxAge',
        ),
        ({"type": "CORS", "cors": {"maxAge": 0}}, '"CORS": maxAge 0 must be >= 1'),
        ({"type": "ExternalAuth", "externalAuth": {}}, '"ExternalAuth": protocol is required'),
        (
            {"type": "ExternalAuth", "externalAuth": {"protocol": "TCP"}},
            '"ExternalAuth": protocol: unknown protocol "TCP" (valid: HTTP, GRPC)',
        ),
        (
            {
                "type": "ExternalAuth",
                "externalAuth": {
                    "protocol": "HTTP",
                    "backendRef": {"name": "a", "port": 1},
                    "forwardBody": {"maxSize": -1},
                },
            },
            '"ExternalAuth": forwardBody.maxSize -1 must be >= 0',
        ),
    ],
)
def test_filter_messages(f: dict[str, Any], message: str) -> None:
    comp = webservice("web", trait("httproute", parentRefs=PARENT, rules=[{}, _filter(f)]))
    assert trait_error(comp) == f'component "web" trait "httproute": rules[1].filters[0] {message}'


@pytest.mark.parametrize(
    ("timeouts", "message"),
    [
        ({}, "rules[0].timeouts: at least one of request or backendRequest must be set"),
        ({"request": "soon"}, 'rules[0].timeouts.request: time: invalid duration "soon"'),
        ({"request": "10"}, 'rules[0].timeouts.request: time: missing unit in duration "10"'),
        ({"backendRequest": 10}, "rules[0].timeouts.backendRequest: expected a duration string, got int"),
        ({"request": "-1s"}, "rules[0].timeouts.request: must be >= 0, got -1s"),
    ],
)
def test_timeout_messages(timeouts: dict[str, Any], message: str) -> None:
    comp = webservice("web", trait("httproute", parentRefs=PARENT, rules=[{"timeouts": timeouts}]))
    assert trait_error(comp) == f'component "web" trait "httproute": {message}'


def test_backend_port_cannot_be_determined_without_a_service_port() -> None:
    comp = worker("jobs", trait("httproute", parentRefs=PARENT, rules=[{"backendRefs": [{"name": "x"}]}, {}]))
    assert trait_error(comp) == (
        'component "jobs" trait "httproute": rules[1]: cannot determine backend port for component "jobs" — '
        "configure the component port or specify backendRefs[].port"
    )
    comp = worker("jobs", trait("httproute", parentRefs=PARENT, rules=[{"backendRefs": [{"port": 80}]}]))
    assert trait_error(comp) == (
        'component "jobs" trait "httproute": rules[0].backendRefs[0]: component "jobs" has no service port; configure '
        "a service port or specify an explicit backend name (for helmchart components, set servicePort and optionally "
        "serviceName on the trait)"
    )


def test_network_policy_is_platform_reserved() -> None:
    text = document(webservice("web", trait("httproute", parentRefs=PARENT, rules=[{}], networkPolicy={})))
    assert error(text, validate=True) == (
        'component "web" trait "httproute": properties: "networkPolicy" is platform-reserved and may only be set via '
        "ClusterProfile capability rendering: oam: property is platform-reserved"
    )


def test_schema_refuses_unknown_parent_ref_fields() -> None:
    text = document(webservice("web", trait("httproute", parentRefs=[{"name": "gw", "port": 1}], rules=[{}])))
    assert error(text, validate=True) == (
        'component "web": trait "httproute": properties.parentRefs[0]: unsupported field "port" '
        "(allowed: name, namespace)"
    )
