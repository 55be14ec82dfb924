"""The ``ingress`` trait (docs/transform.md#routing-traits): a ``networking.k8s.io/v1`` Ingress to the component.

Paths route to the component's own Service unless they name another one (``backend``); the
port rules keep a route from silently pointing at a port the Service does not expose.
``allowedHostnameWildcard`` and ``networkPolicy`` come only from a ClusterProfile rendering
(or the ``expose`` rule): the platform decides which hosts a team may claim and where route
traffic comes from (docs/transform.md#network-policies).

Decisions where the spec is silent: an implicit backend with ``portName`` and no ``port``
routes to that port name; ``backendSelector`` must hold a non-empty ``matchLabels`` mapping
and nothing else (``rules[<i>].paths[<j>]: backendSelector must have a non-empty matchLabels``);
``tls`` that is not a list is refused (``'tls' must be an array``), as is a non-string
``tls[<i>].secretName`` (``tls[<i>].secretName must be a string``) and ``annotations`` that
are not a mapping (``'annotations' must be a map``); host wildcards are checked after every
rule has been read, in rule order; empty ``tls`` lists and hosts are omitted, as Kubernetes'
``omitempty`` fields are, while an explicit backend without a port keeps ``port: {}`` as the
typed ``IngressServiceBackend`` prints it (the API server refuses it either way).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.routing.backends import (
    ServiceTarget,
    annotations_schema,
    implicit_port,
    network_policy_schema,
    service_schema,
    service_target,
)
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

TYPE = "ingress"
PATH_TYPES = ("Prefix", "Exact", "ImplementationSpecific")
UNDETERMINED = "configure the component port or specify 'port'/'portName' in the path"


def _schema() -> Schema:
    path = PropertySchema(
        type="object",
        description="One path of a rule and the Service it routes to.",
        properties={
            "path": PropertySchema(type="string", default="/", description="The URL path to match."),
            "pathType": PropertySchema(
                type="string",
                default="Prefix",
                enum=list(PATH_TYPES),
                description="How the path is matched.",
            ),
            "backend": PropertySchema(
                type="string",
                description="Route to this Service instead of the component's own (an explicit backend).",
            ),
            "port": PropertySchema(
                type="integer",
                description="Service port number (1-65535); on the component's own Service it must be its port.",
            ),
            "portName": PropertySchema(type="string", description="Service port name, used when 'port' is not set."),
            "backendSelector": PropertySchema(
                type="object",
                description="Pods behind an explicit external backend, for traffic-source NetworkPolicy synthesis.",
                properties={
                    "matchLabels": PropertySchema(
                        type="object",
                        additional_properties=True,
                        required=True,
                        description="Labels of the backend's pods.",
                    )
                },
            ),
        },
    )
    rule = PropertySchema(
        type="object",
        description="Routing for one host.",
        properties={
            "host": PropertySchema(type="string", required=True, description="The host name to route."),
            "paths": PropertySchema(
                type="array", required=True, items=path, description="The paths routed for this host."
            ),
        },
    )
    tls = PropertySchema(
        type="object",
        description="One TLS block of the Ingress.",
        properties={
            "hosts": PropertySchema(
                type="array",
                items=PropertySchema(type="string", description="A host covered by the certificate."),
                description="Hosts covered by the certificate.",
            ),
            "secretName": PropertySchema(type="string", description="The Secret holding the certificate."),
        },
    )
    return {
        "rules": PropertySchema(type="array", required=True, items=rule, description="The Ingress rules."),
        "tls": PropertySchema(type="array", items=tls, description="TLS termination for hosts of the Ingress."),
        "annotations": annotations_schema("Ingress"),
        "ingressClassName": PropertySchema(type="string", description="The IngressClass serving the Ingress."),
        **service_schema(),
        "name": PropertySchema(type="string", description="Name of the Ingress (default C-ingress[-<scope>])."),
        "allowedHostnameWildcard": PropertySchema(
            type="string",
            platform_reserved=True,
            description="Platform-set host pattern (*.domain or an exact host) every rule host must match.",
        ),
        "networkPolicy": network_policy_schema(),
    }


@trait(TYPE)
class IngressTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        component = out.component
        target = service_target(props, app.config, component)
        backends: list[RouteBackend] = []
        rules, hosts = _rules(props.get("rules"), target, component, backends)
        wildcard = props.get("allowedHostnameWildcard")
        if isinstance(wildcard, str) and wildcard:
            for host in hosts:
                check_hostname(host, wildcard)
        tls = _tls(props.get("tls"))
        spec: Object = {"rules": rules}
        class_name = props.get("ingressClassName")
        if isinstance(class_name, str) and class_name:
            spec["ingressClassName"] = class_name
        if tls:
            spec["tls"] = tls
        name = sub_application_name(props, component, "ingress")
        meta = metadata(name, out.namespace, app_labels(component))
        annotations = props.get("annotations")
        if annotations is not None and not isinstance(annotations, dict):
            raise ValidationError("'annotations' must be a map")
        if annotations:
            meta["annotations"] = stringify_map(annotations)
        obj: Object = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta, "spec": spec}
        facts = RouteFacts(component, TYPE, props.get("networkPolicy"), backends)
        out.add(TreeApplication(name, out.namespace, RouteObjects([obj], facts), app.owner))


def check_hostname(host: str, wildcard: str) -> None:
    """``*.apps.example.com`` admits exactly one more DNS label; any other pattern must equal the host."""
    if wildcard.startswith("*."):
        suffix = wildcard[1:]
        label = host[: -len(suffix)] if host.endswith(suffix) else ""
        if label and "." not in label:
            return
    elif host == wildcard:
        return
    raise ValidationError(f"hostname {go_quote(host)} is not permitted by allowedHostnameWildcard {go_quote(wildcard)}")


def _rules(
    value: Any, target: ServiceTarget, component: str, backends: list[RouteBackend]
) -> tuple[list[Object], list[str]]:
    """The Ingress rules and their hosts, in order."""
    if not isinstance(value, list) or not value:
        raise ValidationError("required property 'rules' missing or empty")
    rules: list[Object] = []
    hosts: list[str] = []
    for i, rule in enumerate(value):
        if not isinstance(rule, dict):
            raise ValidationError(f"rules[{i}]: expected object")
        host = rule.get("host")
        if not isinstance(host, str):
            raise ValidationError(f"rules[{i}]: required field 'host' missing or not a string")
        paths = rule.get("paths")
        if not isinstance(paths, list) or not paths:
            raise ValidationError(f"rules[{i}]: required field 'paths' missing or empty")
        http_paths = [
            _path(path, f"rules[{i}].paths[{j}]", target, component, backends) for j, path in enumerate(paths)
        ]
        out: Object = {"http": {"paths": http_paths}}
        if host:
            out["host"] = host
        rules.append(out)
        hosts.append(host)
    return rules, hosts


def _path(value: Any, where: str, target: ServiceTarget, component: str, backends: list[RouteBackend]) -> Object:
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    path = value.get("path")
    path_type = value.get("pathType")
    if path_type is None or path_type == "":
        path_type = "Prefix"
    if path_type not in PATH_TYPES:
        raise ValidationError(
            f"{where}: pathType must be 'Prefix', 'Exact', or 'ImplementationSpecific', "
            f"got {go_quote(go_value(path_type))}"
        )
    backend = value.get("backend")
    explicit = isinstance(backend, str) and backend != "" and backend != target.name
    port = port_number(value.get("port"))
    port_name = value.get("portName") if isinstance(value.get("portName"), str) else ""
    selector = value.get("backendSelector")
    if selector is not None and not explicit:
        raise ValidationError(f"{where}: backendSelector is only valid with an explicit external 'backend'")
    labels = _selector_labels(selector, where)
    resolved: int | str | None
    if explicit:
        service = str(backend)
        resolved = port if port is not None else (port_name or None)
    else:
        service = target.name
        resolved = implicit_port(target, port, str(port_name), where, component, UNDETERMINED)
    backends.append(RouteBackend(service, resolved, implicit=not explicit, selector=labels))
    port_ref: Object = {}
    if isinstance(resolved, int):
        port_ref["number"] = resolved
    elif resolved:
        port_ref["name"] = resolved
    ref: Object = {"name": service, "port": port_ref}
    return {
        "path": path if isinstance(path, str) and path else "/",
        "pathType": path_type,
        "backend": {"service": ref},
    }


def _selector_labels(selector: Any, where: str) -> dict[str, str] | None:
    if selector is None:
        return None
    labels = selector.get("matchLabels") if isinstance(selector, dict) else None
    if not isinstance(labels, dict) or not labels or set(selector) != {"matchLabels"}:
        raise ValidationError(f"{where}: backendSelector must have a non-empty matchLabels")
    return stringify_map(labels)


def _tls(value: Any) -> list[Object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError("'tls' must be an array")
    blocks: list[Object] = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ValidationError(f"tls[{i}]: expected object")
        hosts = entry.get("hosts") or []
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise ValidationError(f"tls[{i}].hosts entries must be strings")
        secret = entry.get("secretName")
        if secret is not None and not isinstance(secret, str):
            raise ValidationError(f"tls[{i}].secretName must be a string")
        block: Object = {}
        if hosts:
            block["hosts"] = list(hosts)
        if secret:
            block["secretName"] = secret
        blocks.append(block)
    return blocks
