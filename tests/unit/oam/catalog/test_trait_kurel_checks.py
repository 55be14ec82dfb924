"""Trait checks the kurel oracle corpus showed missing
(docs/transform.md#routing-traits, docs/transform.md#access-and-security)."""

from __future__ import annotations

from oamkit.traits import capabilities, document, find, objects, trait, trait_error, webservice

GATEWAY = capabilities(expose={"controllerType": "gateway", "gatewayName": "gw"})


def test_expose_on_a_gateway_refuses_an_ingress_only_key_even_when_null() -> None:
    comp = webservice("web", trait("expose", rules=[{"matches": [{"path": {"value": "/"}}]}], secretName=None), port=80)
    assert trait_error(comp, GATEWAY) == 'component "web" trait "expose": secretName is only valid when controllerType is "ingress"'


def test_expose_on_an_ingress_refuses_a_null_secret_name() -> None:
    ingress = capabilities(expose={"controllerType": "ingress", "ingressClassName": "nginx"})
    comp = webservice("web", trait("expose", rules=[{"host": "a.example.com"}], secretName=None), port=80)
    assert trait_error(comp, ingress) == 'component "web" trait "expose": secretName must be a non-empty string'


def test_httproute_rule_keeps_only_http_route_rule_fields() -> None:
    rules = [{"name": "main", "host": "a.example.com", "paths": [{"path": "/"}], "matches": [{"path": {"value": "/"}}]}]
    comp = webservice("web", trait("httproute", gatewayName="gw", rules=rules), port=80)
    route = find(objects(document(comp)), "HTTPRoute")
    assert route["spec"]["rules"] == [
        {
            "name": "main",
            "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
            "backendRefs": [{"name": "web", "port": 80}],
        }
    ]


def test_security_context_null_psa_level_is_not_a_string() -> None:
    comp = webservice("web", trait("security-context", psaLevel=None), port=80)
    assert trait_error(comp) == 'component "web" trait "security-context": security-context: psaLevel must be a string, got <nil>'
