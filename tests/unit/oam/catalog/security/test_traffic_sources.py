"""Traffic-source NetworkPolicy synthesis (docs/transform.md#network-policies)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import NS, capabilities, document, error, kinds, objects, run, trait, webservice, worker

from oam_operator.oam import TransformContext, new_builtin_transformer, parse_application

KEY = "oam-operator.dev/component"
NGINX = {"trafficSources": [{"namespace": "ingress-nginx"}]}
RULE = {"host": "shop.example.com", "paths": [{}]}


def peer(namespace: str, pods: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}
    if pods is not None:
        out["podSelector"] = pods
    return out


def ports(*values: int | str) -> list[dict[str, Any]]:
    return [{"port": v, "protocol": "TCP"} for v in values]


def netpol(name: str, selector: dict[str, str], rules: list[Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Ingress"], "ingress": rules},
    }


def synthesized(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if o["metadata"]["name"].endswith("-allow-ingress-traffic")]


def test_a_route_with_traffic_sources_admits_them_on_the_service_port() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    text = document(webservice("web", trait("ingress", rules=[RULE]), port=8080))
    assert kinds(text, caps)[-2:] == [("Ingress", "web-ingress"), ("NetworkPolicy", "web-allow-ingress-traffic")]
    assert synthesized(objects(text, caps)) == [
        netpol("web-allow-ingress-traffic", {KEY: "web"}, [{"from": [peer("ingress-nginx")], "ports": ports(8080)}])
    ]
    labelled = synthesized(objects(text, caps, label=True))[0]
    assert labelled["metadata"]["labels"] == {KEY: "web"}


def test_nothing_without_sources_or_with_an_empty_list() -> None:
    text = document(webservice("web", trait("ingress", rules=[RULE])))
    assert synthesized(objects(text)) == []
    assert synthesized(objects(text, capabilities(ingress={"networkPolicy": {"trafficSources": []}}))) == []


def test_rules_are_distinct_per_sources_and_ports() -> None:
    gateway = {"trafficSources": [{"namespace": "gateway-system", "podSelector": {"matchLabels": {"gw": "public"}}}]}
    caps = capabilities(ingress={"networkPolicy": NGINX}, httproute={"networkPolicy": gateway})
    paths = [{"portName": "http"}, {}, {"backend": "web", "port": 8080}]
    text = document(
        webservice(
            "web",
            trait("ingress", rules=[{"host": "a", "paths": paths}]),
            trait("ingress", rules=[RULE], scope="second"),
            trait("httproute", parentRefs=[{"name": "gw"}], rules=[{}]),
            port=8080,
        )
    )
    assert synthesized(objects(text, caps)) == [
        netpol(
            "web-allow-ingress-traffic",
            {KEY: "web"},
            [
                {"from": [peer("ingress-nginx")], "ports": ports(8080, "http")},
                {"from": [peer("ingress-nginx")], "ports": ports(8080)},
                {"from": [peer("gateway-system", {"matchLabels": {"gw": "public"}})], "ports": ports(8080)},
            ],
        )
    ]


def test_identical_rules_are_merged() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    text = document(webservice("web", trait("ingress", rules=[RULE]), trait("ingress", rules=[RULE], name="again")))
    policy = synthesized(objects(text, caps))[0]
    assert policy["spec"]["ingress"] == [{"from": [peer("ingress-nginx")], "ports": ports(80)}]


def test_a_backend_of_another_component_gets_the_rule_on_its_policy() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    paths = [{}, {"path": "/api", "backend": "api", "port": 9000}, {"path": "/x", "backend": "nowhere", "port": 1}]
    text = document(
        webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])),
        webservice("api", port=9000),
    )
    out = objects(text, caps)
    assert [o["metadata"]["name"] for o in out[-2:]] == ["web-allow-ingress-traffic", "api-allow-ingress-traffic"]
    assert out[-1] == netpol(
        "api-allow-ingress-traffic", {KEY: "api"}, [{"from": [peer("ingress-nginx")], "ports": ports(9000)}]
    )


def test_an_explicit_backend_without_a_port_opens_nothing() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    paths = [{"backend": "api"}]
    text = document(webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])), webservice("api"))
    assert synthesized(objects(text, caps)) == []


def test_external_backends_with_a_selector() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    legacy = {"matchLabels": {"app": "legacy"}}
    paths = [
        {"path": "/z", "backend": "zeta", "port": 80, "backendSelector": {"matchLabels": {"app": "zeta"}}},
        {"path": "/l", "backend": "legacy", "port": 8080, "backendSelector": legacy},
        {"path": "/l2", "backend": "legacy", "portName": "web", "backendSelector": legacy},
    ]
    text = document(webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])))
    out = objects(text, caps, label=True)
    assert [o["metadata"]["name"] for o in synthesized(out)] == [
        "legacy-allow-ingress-traffic",
        "zeta-allow-ingress-traffic",
    ]
    assert synthesized(out)[0] == netpol(
        "legacy-allow-ingress-traffic",
        {"app": "legacy"},
        [{"from": [peer("ingress-nginx")], "ports": ports(8080, "web")}],
    )  # owned by the document: no component label


def test_external_backend_refusals() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    paths = [
        {"backend": "legacy", "port": 80, "backendSelector": {"matchLabels": {"app": "a"}}},
        {"backend": "legacy", "port": 80, "backendSelector": {"matchLabels": {"app": "b"}}},
    ]
    text = document(webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])))
    assert error(text, caps) == (
        f'external backend Service "legacy" in namespace "{NS}" given conflicting backendSelector values'
    )
    db = {
        "name": "db",
        "type": "statefulset",
        "properties": {"image": "postgres:16", "port": 5432, "serviceName": "db-headless"},
        "traits": [trait("ingress", rules=[RULE])],
    }
    paths = [{"backend": "db", "port": 5432, "backendSelector": {"matchLabels": {"app": "other"}}}]
    text = document(db, webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])))
    assert error(text, caps) == (
        f'external backend Service "db" in namespace "{NS}" collides with a synthesized policy named '
        '"db-allow-ingress-traffic"'
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"trafficSources": [], "extra": 1}, 'field "networkPolicy": unsupported key "extra"'),
        (
            {},
            'field "networkPolicy.trafficSources": required field missing; use trafficSources: [] to explicitly '
            "disable auto-generation",
        ),
        (
            {"trafficSources": [{"namespace": "a"}, {"podSelector": {}}]},
            'field "networkPolicy.trafficSources[1].namespace": required field missing',
        ),
        ({"trafficSources": "a"}, 'field "networkPolicy.trafficSources": expected array'),
        ({"trafficSources": ["a"]}, 'field "networkPolicy.trafficSources[0]": expected object'),
        (
            {"trafficSources": [{"namespace": "a", "x": 1}]},
            'field "networkPolicy.trafficSources[0]": unsupported key "x"',
        ),
        ("all", 'field "networkPolicy": expected object'),
    ],
)
def test_network_policy_messages(value: Any, message: str) -> None:
    caps = capabilities(httproute={"networkPolicy": value})
    text = document(webservice("web", trait("httproute", parentRefs=[{"name": "gw"}], rules=[{}])))
    assert error(text, caps) == f'component "web" trait "httproute" {message}'


def test_network_policy_is_checked_after_every_trait_is_applied() -> None:
    caps = capabilities(ingress={"networkPolicy": {}})
    text = document(webservice("web", trait("ingress", rules=[RULE])), webservice("api", trait("ingress")))
    assert error(text, caps) == 'component "api" trait "ingress": required property \'rules\' missing or empty'


def test_policies_go_to_the_bundle_of_their_component() -> None:
    caps = capabilities(ingress={"networkPolicy": NGINX})
    paths = [{}, {"path": "/api", "backend": "api", "port": 80}]
    text = document(
        webservice("web", trait("ingress", rules=[{"host": "h", "paths": paths}])),
        worker("api-jobs"),
        webservice("api"),
        policies=[
            {
                "name": "order",
                "type": "dependency",
                "properties": {"rules": [{"component": "web", "dependsOn": ["api"]}]},
            }
        ],
    )
    result = run(text, caps)
    bundles = {b.name: [a.name for a in b.applications] for b in result.cluster.node.bundle.walk()}
    assert bundles["app-00"] == ["api-jobs", "api", "api-allow-ingress-traffic"]
    assert bundles["app-01"] == ["web", "web-ingress", "web-allow-ingress-traffic"]


def test_the_selector_uses_the_transform_domain() -> None:
    text = document(webservice("web", trait("ingress", rules=[RULE]))).replace(
        "oam-operator.dev/v1alpha1", "launcher.gokure.dev/v1alpha1"
    )
    t = new_builtin_transformer()
    app = parse_application(text, component_types=t.component_types(), trait_types=t.trait_types())
    ctx = TransformContext(capabilities=capabilities(ingress={"networkPolicy": NGINX}), component_label=False)
    policy = t.transform(app, ctx).objects()[-1]
    assert policy["spec"]["podSelector"] == {"matchLabels": {"launcher.gokure.dev/component": "web"}}
