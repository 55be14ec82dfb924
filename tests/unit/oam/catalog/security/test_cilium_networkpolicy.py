"""The ``cilium-networkpolicy`` trait (docs/transform.md#network-policies): rules passed through as written."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import NS, capabilities, document, find, kinds, objects, trait, trait_error, webservice

from oam_operator.oam import CapabilityError

CILIUM_RULES = [{"fromEndpoints": [{"matchLabels": {"app": "web"}}], "toPorts": [{"ports": [{"port": "80"}]}]}]


def test_cilium_policy_object_and_position() -> None:
    props = {"name": "api-l7", "endpointSelector": {"matchLabels": {"app": "api"}}, "ingress": CILIUM_RULES}
    text = document(webservice("api", trait("cilium-networkpolicy", **props)))
    assert kinds(text)[-1] == ("CiliumNetworkPolicy", "api-l7")
    assert find(objects(text), "CiliumNetworkPolicy") == {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNetworkPolicy",
        "metadata": {"name": "api-l7", "namespace": NS},
        "spec": {"endpointSelector": {"matchLabels": {"app": "api"}}, "ingress": CILIUM_RULES},
    }


def test_cilium_policy_without_selector_and_with_egress() -> None:
    obj = find(
        objects(
            document(webservice("api", trait("cilium-networkpolicy", name="p", egress=[{"toEntities": ["world"]}])))
        ),
        "CiliumNetworkPolicy",
    )
    assert obj["spec"] == {"egress": [{"toEntities": ["world"]}]}
    labelled = objects(document(webservice("api", trait("cilium-networkpolicy", name="p", ingress=[{}]))), label=True)
    assert find(labelled, "CiliumNetworkPolicy")["metadata"]["labels"] == {"oam-operator.dev/component": "api"}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"ingress": [{}]}, "required property 'name' missing or not a string"),
        ({"name": 1, "ingress": [{}]}, "required property 'name' missing or not a string"),
        ({"name": "p"}, "at least one of 'egress' or 'ingress' must be specified"),
        ({"name": "p", "egress": {}}, "'egress' must be an array"),
        ({"name": "p", "ingress": [], "endpointSelector": "all"}, "'endpointSelector' must be a map"),
    ],
)
def test_cilium_messages(props: dict[str, Any], message: str) -> None:
    comp = webservice("api", trait("cilium-networkpolicy", **props))
    assert trait_error(comp) == f'component "api" trait "cilium-networkpolicy": {message}'


def test_cilium_rendering_accepts_no_keys() -> None:
    with pytest.raises(CapabilityError) as info:
        capabilities(**{"cilium-networkpolicy": {"endpointSelector": {}}})
    assert str(info.value) == (
        'capability "cilium-networkpolicy": cilium-networkpolicy rendering: unsupported field "endpointSelector" '
        "(allowed: (none))"
    )
