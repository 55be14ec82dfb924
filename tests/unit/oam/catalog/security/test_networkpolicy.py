"""The ``networkpolicy`` trait (docs/transform.md#network-policies)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import NS, capabilities, document, find, kinds, objects, trait, trait_error, webservice

from oam_operator.oam import CapabilityError


def policy(**props: Any) -> dict[str, Any]:
    return find(objects(document(webservice("api", trait("networkpolicy", **props)))), "NetworkPolicy")


def test_ingress_policy_object_and_position() -> None:
    props = {"ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}], "ports": [{"port": 8080}]}]}
    text = document(webservice("api", trait("networkpolicy", **props)))
    assert kinds(text)[-1] == ("NetworkPolicy", "api-allow")
    assert find(objects(text), "NetworkPolicy") == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "api-allow", "namespace": NS, "labels": {"app": "api"}},
        "spec": {
            "podSelector": {"matchLabels": {"app": "api"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"podSelector": {"matchLabels": {"app": "web"}}}],
                    "ports": [{"port": 8080, "protocol": "TCP"}],
                }
            ],
        },
    }


def test_egress_peers_ports_and_protocols() -> None:
    egress = [
        {
            "to": [
                {"namespaceSelector": {"matchLabels": {"team": "db", "tier": 1}}},
                {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                {"podSelector": {}, "namespaceSelector": {"matchLabels": {"x": True}}},
            ],
            "ports": [{"port": "postgres", "protocol": "udp"}, {"port": 53.0, "protocol": "Sctp"}, {"protocol": "TCP"}],
        },
        {},
    ]
    spec = policy(egress=egress)["spec"]
    assert spec["policyTypes"] == ["Egress"]
    assert "ingress" not in spec
    assert spec["egress"] == [
        {
            "to": [
                {"namespaceSelector": {"matchLabels": {"team": "db", "tier": "1"}}},
                {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                {"podSelector": {}, "namespaceSelector": {"matchLabels": {"x": "true"}}},
            ],
            "ports": [
                {"port": "postgres", "protocol": "UDP"},
                {"port": 53, "protocol": "SCTP"},
                {"protocol": "TCP"},
            ],
        },
        {},
    ]


def test_both_directions_and_empty_lists() -> None:
    spec = policy(ingress=[{}], egress=[{}])["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    empty = policy(ingress=[])["spec"]
    assert empty == {"podSelector": {"matchLabels": {"app": "api"}}}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "at least one of 'ingress' or 'egress' must be specified"),
        ({"ingress": None, "egress": None}, "'ingress' must be an array"),
        ({"ingress": {"from": []}}, "'ingress' must be an array"),
        ({"egress": "x"}, "'egress' must be an array"),
        ({"ingress": [{}, 3]}, "ingress[1]: expected object"),
        ({"ingress": [{"from": [{"ipBlok": {}}]}]}, 'ingress[0].from[0]: unsupported key "ipBlok"'),
        ({"egress": [{"to": [{}, {"podSelector": {}, "x": 1}]}]}, 'egress[0].to[1]: unsupported key "x"'),
        ({"ingress": [{"from": [{"ipBlock": {}}]}]}, "ingress[0].from[0].ipBlock: 'cidr' is required"),
        ({"egress": [{"to": [{"ipBlock": {"except": []}}]}]}, "egress[0].to[0].ipBlock: 'cidr' is required"),
        (
            {"ingress": [{"ports": [{"port": True}]}]},
            "ingress[0].ports[0]: 'port' must be a number or named port string",
        ),
        (
            {"ingress": [{"ports": [{"port": 1.5}]}]},
            "ingress[0].ports[0]: 'port' must be a number or named port string",
        ),
        (
            {"ingress": [{"ports": [{"port": 80, "protocol": "ICMP"}]}]},
            'ingress[0].ports[0]: invalid protocol "ICMP" (must be TCP, UDP, or SCTP)',
        ),
        ({"ingress": [{"from": {}}]}, "ingress[0].from: expected array"),
        ({"ingress": [{"to": []}]}, 'ingress[0]: unsupported key "to"'),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    comp = webservice("api", trait("networkpolicy", **props))
    assert trait_error(comp) == f'component "api" trait "networkpolicy": {message}'


def test_networkpolicy_rendering_accepts_no_keys() -> None:
    with pytest.raises(CapabilityError) as info:
        capabilities(networkpolicy={"ingress": []})
    assert str(info.value) == (
        'capability "networkpolicy": networkpolicy rendering: unsupported field "ingress" (allowed: (none))'
    )
