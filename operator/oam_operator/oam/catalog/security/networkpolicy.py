"""The ``networkpolicy`` trait (docs/transform.md#network-policies): a NetworkPolicy ``C-allow`` for the component's
pods.

The policy selects the component's pods by ``app: C`` and lists only the directions the author
wrote rules for, so adding an egress rule never silently denies ingress.

Decisions where the spec is silent: ``'egress' must be an array`` and
``egress[<i>]: expected object`` mirror the ingress messages; a rule's ``from``/``to``/``ports``
that is not a list is ``<path>.<key>: expected array``, a peer or port that is not a mapping
``<path>: expected object``; a rule key other than its peers and ``ports`` is
``<rule path>: unsupported key "<k>"``; a selector that is not a mapping, or whose
``matchLabels`` is not one, is ``<path>.<selector>: expected object with matchLabels``; a
port entry without ``port`` admits every port of its protocol (Kubernetes' meaning); an
empty rule list is ``specified`` (``ingress: []`` denies all ingress) but lists no policy type.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import (
    FixedObjects,
    app_labels,
    metadata,
    refuse_rendering_keys,
    stringify_map,
    whole_number,
)
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

TYPE = "networkpolicy"
PROTOCOLS = ("TCP", "UDP", "SCTP")
_PEER_KEYS = ("podSelector", "namespaceSelector", "ipBlock")
#: direction → its peer list key
_DIRECTIONS = {"ingress": "from", "egress": "to"}


def _selector(what: str) -> PropertySchema:
    return PropertySchema(
        type="object",
        description=f"Selects {what} by labels.",
        properties={
            "matchLabels": PropertySchema(
                type="object", additional_properties=True, description="Labels to match (values stringified)."
            )
        },
    )


def _schema() -> Schema:
    peer = PropertySchema(
        type="object",
        description="A peer: pods, namespaces or an IP block.",
        properties={
            "podSelector": _selector("pods"),
            "namespaceSelector": _selector("namespaces"),
            "ipBlock": PropertySchema(
                type="object",
                description="An IP block.",
                properties={
                    "cidr": PropertySchema(type="string", required=True, description="The CIDR of the block."),
                    "except": PropertySchema(
                        type="array",
                        items=PropertySchema(type="string", description="An excluded CIDR."),
                        description="CIDRs excluded from the block.",
                    ),
                },
            ),
        },
    )
    port = PropertySchema(
        type="object",
        description="A port admitted by the rule.",
        properties={
            "port": PropertySchema(description="Port number or named port."),
            "protocol": PropertySchema(
                type="string", default="TCP", description="TCP, UDP or SCTP (case-insensitive)."
            ),
        },
    )

    def rule(peers: str, direction: str) -> PropertySchema:
        return PropertySchema(
            type="array",
            description=f"{direction.capitalize()} rules; listing the key makes the policy an {direction} policy.",
            items=PropertySchema(
                type="object",
                description=f"One {direction} rule.",
                properties={
                    peers: PropertySchema(type="array", items=peer, description="Peers the rule admits."),
                    "ports": PropertySchema(type="array", items=port, description="Ports the rule admits."),
                },
            ),
        )

    return {"ingress": rule("from", "ingress"), "egress": rule("to", "egress")}


@trait(TYPE)
class NetworkPolicyTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ())
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        if "ingress" not in props and "egress" not in props:
            raise ValidationError("at least one of 'ingress' or 'egress' must be specified")
        component = out.component
        spec: Object = {"podSelector": {"matchLabels": app_labels(component)}}
        policy_types: list[str] = []
        for direction, peers in _DIRECTIONS.items():
            rules = _rules(props.get(direction), direction, peers, direction in props)
            if rules:
                policy_types.append(direction.capitalize())
                spec[direction] = rules
        if policy_types:
            spec["policyTypes"] = policy_types
        name = f"{component}-allow"
        obj: Object = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": metadata(name, out.namespace, app_labels(component)),
            "spec": spec,
        }
        out.add(TreeApplication(f"{component}-networkpolicy", out.namespace, FixedObjects([obj]), app.owner))


def _rules(value: Any, direction: str, peers_key: str, present: bool) -> list[Object]:
    if not present:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"'{direction}' must be an array")
    rules: list[Object] = []
    for i, rule in enumerate(value):
        where = f"{direction}[{i}]"
        if not isinstance(rule, dict):
            raise ValidationError(f"{where}: expected object")
        for key in sorted(rule):
            if key not in (peers_key, "ports"):
                raise ValidationError(f"{where}: unsupported key {go_quote(key)}")
        out: Object = {}
        peers = [_peer(p, f"{where}.{peers_key}[{j}]") for j, p in enumerate(_list(rule, peers_key, where))]
        if peers:
            out[peers_key] = peers
        ports = [_port(p, f"{where}.ports[{j}]") for j, p in enumerate(_list(rule, "ports", where))]
        if ports:
            out["ports"] = ports
        rules.append(out)
    return rules


def _list(rule: dict[str, Any], key: str, where: str) -> list[Any]:
    value = rule.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{where}.{key}: expected array")
    return value


def _peer(value: Any, where: str) -> Object:
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    for key in sorted(value):
        if key not in _PEER_KEYS:
            raise ValidationError(f"{where}: unsupported key {go_quote(key)}")
    peer: Object = {}
    for key in ("podSelector", "namespaceSelector"):
        selector = value.get(key)
        if selector is None:
            continue
        labels = selector.get("matchLabels") if isinstance(selector, dict) else None
        if not isinstance(selector, dict) or not (labels is None or isinstance(labels, dict)):
            raise ValidationError(f"{where}.{key}: expected object with matchLabels")
        peer[key] = {"matchLabels": stringify_map(labels)} if labels else {}
    block = value.get("ipBlock")
    if block is not None:
        cidr = block.get("cidr") if isinstance(block, dict) else None
        if not isinstance(cidr, str) or not cidr:
            raise ValidationError(f"{where}.ipBlock: 'cidr' is required")
        ip_block: Object = {"cidr": cidr}
        excluded = block.get("except")
        if excluded:
            ip_block["except"] = copy.deepcopy(excluded)
        peer["ipBlock"] = ip_block
    return peer


def _port(value: Any, where: str) -> Object:
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    port: Object = {}
    raw = value.get("port")
    if raw is not None:
        number = whole_number(raw)
        if number is not None:
            port["port"] = number
        elif isinstance(raw, str) and raw:
            port["port"] = raw
        else:
            raise ValidationError(f"{where}: 'port' must be a number or named port string")
    protocol = value.get("protocol")
    text = "TCP" if protocol is None or protocol == "" else go_value(protocol).upper()
    if text not in PROTOCOLS:
        raise ValidationError(f"{where}: invalid protocol {go_quote(go_value(protocol))} (must be TCP, UDP, or SCTP)")
    port["protocol"] = text
    return port
