"""The ``ingress`` trait (docs/transform.md#routing-traits): defaults, backends, messages, capabilities."""

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
    passthrough,
    run,
    trait,
    trait_error,
    webservice,
    worker,
)

RULE = {"host": "shop.example.com", "paths": [{"path": "/"}]}


def ingress(component: dict[str, Any], caps: Any = None) -> dict[str, Any]:
    return find(objects(document(component), caps), "Ingress")


def backend(name: str, port: dict[str, Any] | None = None, path: str = "/", path_type: str = "Prefix") -> Any:
    service: dict[str, Any] = {"name": name, "port": {} if port is None else port}
    return {"path": path, "pathType": path_type, "backend": {"service": service}}


def test_minimal_ingress_object_and_position() -> None:
    text = document(webservice("web", trait("ingress", rules=[RULE]), port=8080))
    assert kinds(text) == [
        ("Deployment", "web"),
        ("Service", "web"),
        ("ServiceAccount", "web"),
        ("Ingress", "web-ingress"),
    ]
    assert find(objects(text), "Ingress") == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web-ingress", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "rules": [
                {"host": "shop.example.com", "http": {"paths": [backend("web", {"number": 8080})]}},
            ]
        },
    }


def test_defaults_path_and_path_type_and_default_port() -> None:
    rules = [{"host": "a.example.com", "paths": [{}, {"path": "/x", "pathType": "Exact"}]}]
    obj = ingress(webservice("web", trait("ingress", rules=rules)))
    assert obj["spec"]["rules"][0]["http"]["paths"] == [
        backend("web", {"number": 80}),
        backend("web", {"number": 80}, "/x", "Exact"),
    ]


def test_class_tls_annotations_and_names() -> None:
    props = {
        "rules": [RULE],
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}, {}],
        "annotations": {"a": "b", "n": 5, "t": True, "f": 1.5},
        "name": "front",
    }
    obj = ingress(webservice("web", trait("ingress", **props)))
    assert obj["metadata"] == {
        "name": "front",
        "namespace": NS,
        "labels": {"app": "web"},
        "annotations": {"a": "b", "n": "5", "t": "true", "f": "1.5"},
    }
    assert obj["spec"]["ingressClassName"] == "nginx"
    assert obj["spec"]["tls"] == [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}, {}]
    scoped = objects(document(webservice("web", trait("ingress", rules=[RULE], scope="public"))))
    assert find(scoped, "Ingress")["metadata"]["name"] == "web-ingress-public"


def test_explicit_backends_ports_and_port_names() -> None:
    paths = [
        {"path": "/a", "backend": "other", "port": 9000},
        {"path": "/b", "backend": "other", "portName": "grpc"},
        {"path": "/c", "backend": "other", "port": 9000, "portName": "ignored"},
        {"path": "/d", "backend": "other"},
        {"path": "/e", "backend": "other", "port": 0, "portName": "fallback"},
        {"path": "/f", "backend": "web", "port": 8080},
        {"path": "/g", "portName": "http"},
        {"path": "/h", "port": 8080.0},
    ]
    obj = ingress(webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}]), port=8080))
    assert obj["spec"]["rules"][0]["http"]["paths"] == [
        backend("other", {"number": 9000}, "/a"),
        backend("other", {"name": "grpc"}, "/b"),
        backend("other", {"number": 9000}, "/c"),
        backend("other", None, "/d"),
        backend("other", {"name": "fallback"}, "/e"),
        backend("web", {"number": 8080}, "/f"),
        backend("web", {"name": "http"}, "/g"),
        backend("web", {"number": 8080}, "/h"),
    ]


def test_empty_host_is_omitted_from_the_rule() -> None:
    obj = ingress(webservice("web", trait("ingress", rules=[{"host": "", "paths": [{}]}])))
    assert obj["spec"]["rules"] == [{"http": {"paths": [backend("web", {"number": 80})]}}]


def test_service_port_and_name_on_a_component_without_service_port() -> None:
    obj = ingress(worker("jobs", trait("ingress", rules=[RULE], servicePort=9090)))
    assert obj["spec"]["rules"][0]["http"]["paths"] == [backend("jobs", {"number": 9090})]
    named = ingress(worker("jobs", trait("ingress", rules=[RULE], servicePort=9090, serviceName="jobs-svc")))
    assert named["spec"]["rules"][0]["http"]["paths"] == [backend("jobs-svc", {"number": 9090})]


def test_statefulset_backend_follows_service_name() -> None:
    comp = {
        "name": "db",
        "type": "statefulset",
        "properties": {"image": "postgres:16", "port": 5432, "serviceName": "db-headless"},
        "traits": [trait("ingress", rules=[RULE])],
    }
    obj = ingress(comp)
    assert obj["spec"]["rules"][0]["http"]["paths"] == [backend("db-headless", {"number": 5432})]


def test_backend_selector_is_accepted_on_an_explicit_backend_and_not_emitted() -> None:
    paths = [{"backend": "legacy", "port": 80, "backendSelector": {"matchLabels": {"app": "legacy"}}}]
    obj = ingress(webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])))
    assert obj["spec"]["rules"][0]["http"]["paths"] == [backend("legacy", {"number": 80})]


HAS_NO_PORT = (
    'component "pt" has no service port; configure a service port or specify an explicit backend name '
    "(for helmchart components, set servicePort and optionally serviceName on the trait)"
)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"rules": [RULE], "servicePort": 0}, "servicePort must be a valid port number (1–65535)"),
        ({"rules": [RULE], "servicePort": 70000}, "servicePort must be a valid port number (1–65535)"),
        ({"rules": [RULE], "servicePort": "80"}, "servicePort must be a valid port number (1–65535)"),
        (
            {"rules": [RULE], "servicePort": 8080},
            "servicePort may not be set on a component that already exposes service port 80; "
            "use path-level 'port' or 'backend' overrides instead",
        ),
        ({"rules": [RULE], "serviceName": "x"}, "serviceName requires a valid servicePort to also be set on the trait"),
        ({}, "required property 'rules' missing or empty"),
        ({"rules": []}, "required property 'rules' missing or empty"),
        ({"rules": "x"}, "required property 'rules' missing or empty"),
        ({"rules": ["x"]}, "rules[0]: expected object"),
        ({"rules": [RULE, {"paths": [{}]}]}, "rules[1]: required field 'host' missing or not a string"),
        ({"rules": [{"host": 5, "paths": [{}]}]}, "rules[0]: required field 'host' missing or not a string"),
        ({"rules": [{"host": "h"}]}, "rules[0]: required field 'paths' missing or empty"),
        ({"rules": [{"host": "h", "paths": []}]}, "rules[0]: required field 'paths' missing or empty"),
        ({"rules": [{"host": "h", "paths": [{}, 3]}]}, "rules[0].paths[1]: expected object"),
        (
            {"rules": [{"host": "h", "paths": [{"pathType": "Regex"}]}]},
            "rules[0].paths[0]: pathType must be 'Prefix', 'Exact', or 'ImplementationSpecific', got \"Regex\"",
        ),
        (
            {"rules": [{"host": "h", "paths": [{"port": 9000}]}]},
            "rules[0].paths[0]: cannot route implicit backend to port 9000 — component service exposes port 80; "
            "specify an explicit backend name or match the component port",
        ),
        (
            {"rules": [{"host": "h", "paths": [{"backendSelector": {"matchLabels": {"a": "b"}}}]}]},
            "rules[0].paths[0]: backendSelector is only valid with an explicit external 'backend'",
        ),
        ({"rules": [RULE], "tls": ["x"]}, "tls[0]: expected object"),
        ({"rules": [RULE], "tls": [{"hosts": ["a", 1]}]}, "tls[0].hosts entries must be strings"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert trait_error(webservice("web", trait("ingress", **props))) == f'component "web" trait "ingress": {message}'


def test_implicit_backend_needs_a_service_port() -> None:
    comp = passthrough("pt", {"apiVersion": "v1", "kind": "ConfigMap"}, trait("ingress", rules=[RULE]))
    assert trait_error(comp) == f'component "pt" trait "ingress": rules[0].paths[0]: {HAS_NO_PORT}'
    worker_message = trait_error(worker("jobs", trait("ingress", rules=[RULE])))
    assert worker_message == (
        'component "jobs" trait "ingress": rules[0].paths[0]: component "jobs" has no service port; configure a '
        "service port or specify an explicit backend name (for helmchart components, set servicePort and optionally "
        "serviceName on the trait)"
    )
    explicit = passthrough(
        "pt",
        {"apiVersion": "v1", "kind": "ConfigMap"},
        trait("ingress", rules=[{"host": "h", "paths": [{"backend": "x"}]}]),
    )
    assert find(objects(document(explicit)), "Ingress")["spec"]["rules"][0]["http"]["paths"] == [backend("x")]


def test_schema_checks_run_before_the_handler() -> None:
    text = document(webservice("web", trait("ingress", rules=[{"paths": [{}]}])))
    assert error(text, validate=True) == 'component "web": trait "ingress": properties.rules[0]: "host" is required'
    bad_type = document(webservice("web", trait("ingress", rules=[{"host": "h", "paths": [{"pathType": "X"}]}])))
    assert error(bad_type, validate=True) == (
        'component "web": trait "ingress": properties.rules[0].paths[0].pathType: unknown pathType "X" '
        "(valid: Prefix, Exact, ImplementationSpecific)"
    )


@pytest.mark.parametrize("key", ["allowedHostnameWildcard", "networkPolicy"])
def test_platform_reserved_properties_are_refused_when_authored(key: str) -> None:
    text = document(webservice("web", trait("ingress", rules=[RULE], **{key: None})))
    expected = (
        f'component "web" trait "ingress": properties: "{key}" is platform-reserved and may only be set via '
        "ClusterProfile capability rendering: oam: property is platform-reserved"
    )
    assert error(text, validate=True) == expected
    assert error(text, validate=False) == expected


def test_allowed_hostname_wildcard_from_the_rendering() -> None:
    caps = capabilities(ingress={"allowedHostnameWildcard": "*.apps.example.com"})
    ok = [{"host": "shop.apps.example.com", "paths": [{}]}]
    assert ingress(webservice("web", trait("ingress", rules=ok)), caps)["spec"]["rules"][0]["host"] == (
        "shop.apps.example.com"
    )
    for host in ("a.b.apps.example.com", "apps.example.com", ".apps.example.com", "shop.example.com"):
        rules: list[Any] = [{"host": host, "paths": [{}]}]
        assert trait_error(webservice("web", trait("ingress", rules=rules)), caps) == (
            f'component "web" trait "ingress": hostname "{host}" is not permitted by allowedHostnameWildcard '
            '"*.apps.example.com"'
        )
    exact = capabilities(ingress={"allowedHostnameWildcard": "shop.example.com"})
    assert ingress(webservice("web", trait("ingress", rules=[RULE])), exact)["spec"]["rules"][0]["host"] == (
        "shop.example.com"
    )
    other = [{"host": "x.example.com", "paths": [{}]}]
    assert trait_error(webservice("web", trait("ingress", rules=other)), exact) == (
        'component "web" trait "ingress": hostname "x.example.com" is not permitted by allowedHostnameWildcard '
        '"shop.example.com"'
    )


def test_rendering_merges_under_authored_properties_at_the_top_level() -> None:
    caps = capabilities(
        ingress={"ingressClassName": "nginx", "annotations": {"platform": "yes"}},
        ingress__internal={"ingressClassName": "internal"},
    )
    merged = ingress(webservice("web", trait("ingress", rules=[RULE], annotations={"team": "a"})), caps)
    assert merged["spec"]["ingressClassName"] == "nginx"
    assert merged["metadata"]["annotations"] == {"team": "a"}  # authored key replaces the rendering's whole
    from_rendering = ingress(webservice("web", trait("ingress", rules=[RULE])), caps)
    assert from_rendering["metadata"]["annotations"] == {"platform": "yes"}
    scoped = ingress(webservice("web", trait("ingress", rules=[RULE], scope="internal")), caps)
    assert scoped["spec"]["ingressClassName"] == "internal"
    assert scoped["metadata"]["name"] == "web-ingress-internal"
    fallback = ingress(webservice("web", trait("ingress", rules=[RULE], scope="other")), caps)
    assert fallback["spec"]["ingressClassName"] == "nginx"
    result = run(document(webservice("web", trait("ingress", rules=[RULE], scope="internal"))), caps)
    assert result.policy_result.consumed_capabilities == ["ingress.internal"]


def test_component_label_on_the_ingress() -> None:
    obj = find(objects(document(webservice("web", trait("ingress", rules=[RULE]))), label=True), "Ingress")
    assert obj["metadata"]["labels"] == {"app": "web", "oam-operator.dev/component": "web"}
