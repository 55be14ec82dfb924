"""The ``httproute`` trait (docs/transform.md#routing-traits): a Gateway API ``HTTPRoute`` to the component.

The route attaches to the authored ``parentRefs`` or, without them, to the gateway named by
``gatewayName`` (normally from a ClusterProfile rendering), so teams need not know where the
platform's gateway lives. Backends follow the same implicit/explicit rules as ``ingress``;
filters and timeouts are checked here so a mistake fails the transform rather than the
Gateway's admission.

Decisions where the spec is silent:

* messages for shapes the spec does not cover: ``rules[<i>]: expected object``,
  ``rules[<i>].<list>: expected array``, ``rules[<i>].<list>[<j>]: expected object``,
  ``rules[<i>].matches[<j>].path: type must be 'Exact', 'PathPrefix', or 'RegularExpression', got "<t>"``,
  ``rules[<i>].matches[<j>].path: value must be a string``,
  ``rules[<i>].matches[<j>].headers[<k>]: type must be 'Exact' or 'RegularExpression', got "<t>"``,
  ``'annotations' must be a map``; ``hostnames`` that is not a list of strings is refused with
  the spec's ``hostnames entries must be strings``; an empty parentRef name counts as missing;
* fields of a match or backendRef that the spec does not model (``method``, ``queryParams``,
  ``weight``, …) are passed through as written, and so are the Gateway API rule fields it does
  not model (``name``, ``retry``, ``sessionPersistence``); a rule key that is no field of an
  HTTPRoute rule at all (an ingress-style ``host`` or ``paths``) is dropped, as kurel's typed
  decoding of the rule drops it;
* a match without ``path`` gets none (the Gateway defaults it); an empty ``backendRefs``
  list counts as absent.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.routing.backends import (
    ServiceTarget,
    annotations_schema,
    implicit_port,
    network_policy_schema,
    service_schema,
    service_target,
)
from oam_operator.oam.catalog.routing.route_filters import check_filter, check_timeouts
from oam_operator.oam.catalog.security.traffic_sources import RouteBackend, RouteFacts, RouteObjects
from oam_operator.oam.catalog.shared.trait_kit import (
    app_labels,
    metadata,
    port_number,
    stringify_map,
    sub_application_name,
)
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

TYPE = "httproute"
DEFAULT_GATEWAY_NAMESPACE = "gateway-system"
PATH_MATCH_TYPES = ("Exact", "PathPrefix", "RegularExpression")
HEADER_MATCH_TYPES = ("Exact", "RegularExpression")


def _open_items(description: str, item: str) -> PropertySchema:
    return PropertySchema(
        type="array",
        description=description,
        items=PropertySchema(type="object", additional_properties=True, description=item),
    )


def _schema() -> Schema:
    parent_ref = PropertySchema(
        type="object",
        description="A Gateway the route attaches to.",
        properties={
            "name": PropertySchema(type="string", required=True, description="Name of the Gateway."),
            "namespace": PropertySchema(type="string", description="Namespace of the Gateway."),
        },
    )
    rule = PropertySchema(
        type="object",
        additional_properties=True,
        description="One routing rule: matches, backends, filters and timeouts.",
        properties={
            "matches": _open_items(
                "Request matches: path {type (PathPrefix), value (/)} and headers [{name, value, type (Exact)}].",
                "One request match.",
            ),
            "backendRefs": _open_items(
                "Backends {name (the component's Service), port (its service port)}; default: the component.",
                "One backend.",
            ),
            "filters": _open_items(
                "Filters {type, <lowerCamel type>: {...}}: RequestRedirect, URLRewrite, RequestHeaderModifier, "
                "ResponseHeaderModifier, RequestMirror, CORS, ExternalAuth.",
                "One filter.",
            ),
            "timeouts": PropertySchema(
                type="object",
                additional_properties=True,
                description="Go durations request and backendRequest (backendRequest <= request).",
            ),
        },
    )
    return {
        "parentRefs": PropertySchema(
            type="array",
            items=parent_ref,
            description="Gateways the route attaches to (default: gatewayName in gatewayNamespace).",
        ),
        "hostnames": PropertySchema(
            type="array",
            items=PropertySchema(type="string", description="A host name."),
            description="Host names the route matches.",
        ),
        "rules": PropertySchema(type="array", required=True, items=rule, description="The routing rules."),
        "annotations": annotations_schema("HTTPRoute"),
        "gatewayName": PropertySchema(type="string", description="Gateway to attach to when no parentRefs are given."),
        "gatewayNamespace": PropertySchema(
            type="string",
            default=DEFAULT_GATEWAY_NAMESPACE,
            description="Namespace of gatewayName.",
        ),
        **service_schema(),
        "name": PropertySchema(type="string", description="Name of the HTTPRoute (default C-httproute[-<scope>])."),
        "networkPolicy": network_policy_schema(),
    }


@trait(TYPE)
class HTTPRouteTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        component = out.component
        target = service_target(props, app.config, component)
        spec: Object = {"parentRefs": _parent_refs(props)}
        hostnames = props.get("hostnames")
        if hostnames is not None:
            if not isinstance(hostnames, list) or not all(isinstance(h, str) for h in hostnames):
                raise ValidationError("hostnames entries must be strings")
            if hostnames:
                spec["hostnames"] = list(hostnames)
        rules = props.get("rules")
        if not isinstance(rules, list) or not rules:
            raise ValidationError("required property 'rules' missing or empty")
        backends: list[RouteBackend] = []
        spec["rules"] = [_rule(rule, i, target, component, backends) for i, rule in enumerate(rules)]
        name = sub_application_name(props, component, "httproute")
        meta = metadata(name, out.namespace, app_labels(component))
        annotations = props.get("annotations")
        if annotations is not None and not isinstance(annotations, dict):
            raise ValidationError("'annotations' must be a map")
        if annotations:
            meta["annotations"] = stringify_map(annotations)
        obj: Object = {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": meta,
            "spec": spec,
        }
        facts = RouteFacts(component, TYPE, props.get("networkPolicy"), backends)
        out.add(TreeApplication(name, out.namespace, RouteObjects([obj], facts), app.owner))


def _parent_refs(props: dict[str, Any]) -> list[Object]:
    refs = props.get("parentRefs")
    if not isinstance(refs, list) or not refs:
        gateway = props.get("gatewayName")
        if not isinstance(gateway, str) or not gateway:
            raise ValidationError(
                "required property 'parentRefs' missing or empty (and no gatewayName capability to synthesize from)"
            )
        namespace = props.get("gatewayNamespace")
        if not isinstance(namespace, str) or not namespace:
            namespace = DEFAULT_GATEWAY_NAMESPACE
        return [{"name": gateway, "namespace": namespace}]
    parents: list[Object] = []
    for i, ref in enumerate(refs):
        name = ref.get("name") if isinstance(ref, dict) else None
        if not isinstance(name, str) or not name:
            raise ValidationError(f"parentRefs[{i}]: required field 'name' missing or not a string")
        parent: Object = {"name": name}
        namespace = ref.get("namespace")
        if isinstance(namespace, str) and namespace:
            parent["namespace"] = namespace
        parents.append(parent)
    return parents


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    """A list of mappings at ``where`` (empty when absent)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{where}: expected array")
    for j, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValidationError(f"{where}[{j}]: expected object")
    return value


def _rule(value: Any, i: int, target: ServiceTarget, component: str, backends: list[RouteBackend]) -> Object:
    where = f"rules[{i}]"
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    rule: Object = {k: copy.deepcopy(v) for k, v in value.items() if k in _GATEWAY_RULE_FIELDS}
    matches = [
        _match(m, f"{where}.matches[{j}]") for j, m in enumerate(_objects(value.get("matches"), f"{where}.matches"))
    ]
    if matches:
        rule["matches"] = matches
    refs = _objects(value.get("backendRefs"), f"{where}.backendRefs")
    if refs:
        rule["backendRefs"] = [
            _backend_ref(ref, f"{where}.backendRefs[{j}]", target, component, backends) for j, ref in enumerate(refs)
        ]
    elif target.port:
        backends.append(RouteBackend(target.name, target.port, implicit=True))
        rule["backendRefs"] = [{"name": target.name, "port": target.port}]
    else:
        raise ValidationError(
            f"{where}: cannot determine backend port for component {go_quote(component)} — configure the component "
            "port or specify backendRefs[].port"
        )
    filters = [
        check_filter(f, f"{where}.filters[{j}]") for j, f in enumerate(_list(value.get("filters"), f"{where}.filters"))
    ]
    if filters:
        rule["filters"] = filters
    if value.get("timeouts") is not None:
        rule["timeouts"] = check_timeouts(value["timeouts"], f"{where}.timeouts")
    return rule


#: The fields of a Gateway API ``HTTPRouteRule`` (gateway.networking.k8s.io/v1) that the spec
#: does not model; ``matches``, ``backendRefs``, ``filters`` and ``timeouts`` are built below.
_GATEWAY_RULE_FIELDS = ("name", "retry", "sessionPersistence")


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{where}: expected array")
    return value


def _match(value: dict[str, Any], where: str) -> Object:
    match: Object = {k: copy.deepcopy(v) for k, v in value.items() if k not in ("path", "headers")}
    path = value.get("path")
    if path is not None:
        if not isinstance(path, dict):
            raise ValidationError(f"{where}.path: expected object")
        kind = path.get("type")
        kind = "PathPrefix" if kind is None or kind == "" else kind
        if kind not in PATH_MATCH_TYPES:
            raise ValidationError(
                f"{where}.path: type must be 'Exact', 'PathPrefix', or 'RegularExpression', "
                f"got {go_quote(go_value(kind))}"
            )
        text = path.get("value")
        if text is not None and not isinstance(text, str):
            raise ValidationError(f"{where}.path: value must be a string")
        match["path"] = {"type": kind, "value": text or "/"}
    headers = []
    for k, header in enumerate(_objects(value.get("headers"), f"{where}.headers")):
        at = f"{where}.headers[{k}]"
        if header.get("name") is None or header.get("name") == "":
            raise ValidationError(f"{at}: required field 'name' missing")
        if header.get("value") is None:
            raise ValidationError(f"{at}: required field 'value' missing")
        kind = header.get("type")
        kind = "Exact" if kind is None or kind == "" else kind
        if kind not in HEADER_MATCH_TYPES:
            raise ValidationError(f"{at}: type must be 'Exact' or 'RegularExpression', got {go_quote(go_value(kind))}")
        headers.append({"name": go_value(header["name"]), "value": go_value(header["value"]), "type": kind})
    if headers:
        match["headers"] = headers
    return match


def _backend_ref(
    value: dict[str, Any], where: str, target: ServiceTarget, component: str, backends: list[RouteBackend]
) -> Object:
    ref: Object = {k: copy.deepcopy(v) for k, v in value.items() if k not in ("name", "port")}
    name = value.get("name")
    service = name if isinstance(name, str) and name else target.name
    port = port_number(value.get("port"))
    resolved: int | str | None
    if service != target.name:
        resolved = port
    else:
        resolved = implicit_port(target, port, "", where, component, "specify 'port' in the backendRef")
    backends.append(RouteBackend(service, resolved, implicit=service == target.name))
    ref["name"] = service
    if resolved is not None:
        ref["port"] = resolved
    return ref
