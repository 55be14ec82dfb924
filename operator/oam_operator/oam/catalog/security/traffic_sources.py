"""Traffic-source NetworkPolicy synthesis (docs/transform.md#network-policies).

A platform whose namespaces default-deny ingress states, in the ``networkPolicy`` rendering of
a routing capability, where route traffic comes from (the ingress controller's namespace,
the gateway's pods). After every trait is applied, each component that routing traits send
traffic to gets ``C-allow-ingress-traffic`` admitting those sources on the routed ports, so a
route works without hand-written policies.

The routing traits (``ingress``, ``httproute``) leave what they routed on their
sub-application config (:class:`RouteObjects`); :func:`synthesize_network_policies` reads
those facts from the tree, validates the ``networkPolicy`` property of each route, and appends
the policies to the bundles.

Decisions where the spec is silent:

* ``networkPolicy`` that is not a mapping, a ``trafficSources`` that is not a list, an entry
  that is not a mapping, an entry key other than ``namespace``/``podSelector``, a non-string
  ``namespace`` and a non-mapping ``podSelector`` are refused in the same
  ``component "<c>" trait "<t>" field "<f>": …`` form (``expected object``,
  ``expected array``, ``unsupported key "<k>"``, ``expected string``); an empty ``namespace``
  counts as missing.
* A backend whose port is unknown (an explicit backend without ``port``) opens nothing: a
  policy names the ports it admits.
* An external backend policy goes into the bundle of the first component (document order)
  whose route names it, after that bundle's component policies; it selects the pods by the
  ``backendSelector`` as ``matchLabels``.
* Components emitted by a lowering rule select their pods by the authored owner's label.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, metadata
from oam_operator.oam.engine.handlers import ComponentConfig, Object, backend_service_name
from oam_operator.oam.engine.labels import component_label_value
from oam_operator.oam.engine.tree import Bundle, TreeApplication
from oam_operator.oam.errors import TransformError
from oam_operator.oam.formatting.gofmt import go_quote

POLICY_SUFFIX = "-allow-ingress-traffic"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
_SOURCE_KEYS = ("namespace", "podSelector")


@dataclass(frozen=True)
class RouteBackend:
    """One backend a route sends traffic to; ``port`` ``None`` = unknown."""

    service: str
    port: int | str | None
    implicit: bool = False
    selector: dict[str, str] | None = None


@dataclass
class RouteFacts:
    """What one routing trait routed: its component, type, ``networkPolicy`` value and backends."""

    component: str
    trait_type: str
    network_policy: Any
    backends: list[RouteBackend] = field(default_factory=list)


class RouteObjects(FixedObjects):
    """A routing trait's sub-application: its object plus the facts the synthesis reads."""

    def __init__(self, objects: list[Object], facts: RouteFacts) -> None:
        super().__init__(objects)
        self.facts = facts

    def route_facts(self) -> RouteFacts:
        return self.facts


@dataclass
class NetpolComponent:
    """A component of the lowered document, as the synthesis needs it."""

    name: str
    owner: str
    config: ComponentConfig
    bundle: Bundle


@dataclass
class _Policy:
    """The rules collected for one synthesized policy, in first-seen order."""

    bundle: Bundle
    selector: dict[str, str]
    rules: list[Object] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)

    def add(self, sources: list[Object], ports: list[int | str]) -> None:
        key = json.dumps([sources, [str(type(p)) + str(p) for p in ports]], sort_keys=True)
        if key in self.keys:
            return
        self.keys.add(key)
        self.rules.append(
            {
                "from": copy.deepcopy(sources),
                "ports": [{"port": p, "protocol": "TCP"} for p in ports],
            }
        )


def _field_error(facts: RouteFacts, name: str, message: str) -> TransformError:
    return TransformError(
        f"component {go_quote(facts.component)} trait {go_quote(facts.trait_type)} field {go_quote(name)}: {message}"
    )


def traffic_sources(facts: RouteFacts) -> list[Object] | None:
    """The ``from`` peers of a route's ``networkPolicy``; ``None`` when it asks for nothing."""
    value = facts.network_policy
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _field_error(facts, "networkPolicy", "expected object")
    for key in sorted(value):
        if key != "trafficSources":
            raise _field_error(facts, "networkPolicy", f"unsupported key {go_quote(key)}")
    sources = value.get("trafficSources")
    if sources is None:
        raise _field_error(
            facts,
            "networkPolicy.trafficSources",
            "required field missing; use trafficSources: [] to explicitly disable auto-generation",
        )
    if not isinstance(sources, list):
        raise _field_error(facts, "networkPolicy.trafficSources", "expected array")
    peers: list[Object] = []
    for i, source in enumerate(sources):
        where = f"networkPolicy.trafficSources[{i}]"
        if not isinstance(source, dict):
            raise _field_error(facts, where, "expected object")
        for key in sorted(source):
            if key not in _SOURCE_KEYS:
                raise _field_error(facts, where, f"unsupported key {go_quote(key)}")
        namespace = source.get("namespace")
        if namespace is None or namespace == "":
            raise _field_error(facts, f"{where}.namespace", "required field missing")
        if not isinstance(namespace, str):
            raise _field_error(facts, f"{where}.namespace", "expected string")
        peer: Object = {"namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: namespace}}}
        selector = source.get("podSelector")
        if selector is not None:
            if not isinstance(selector, dict):
                raise _field_error(facts, f"{where}.podSelector", "expected object")
            peer["podSelector"] = copy.deepcopy(selector)
        peers.append(peer)
    return peers


def _sorted_ports(ports: list[int | str]) -> list[int | str]:
    """Distinct ports, numbers first (ascending), then names."""
    numbers = sorted({p for p in ports if isinstance(p, int)})
    names = sorted({p for p in ports if isinstance(p, str)})
    return [*numbers, *names]


def _route_facts(app: TreeApplication) -> RouteFacts | None:
    fn = getattr(app.config, "route_facts", None)
    facts = fn() if callable(fn) else None
    return facts if isinstance(facts, RouteFacts) else None


def _collect_facts(components: list[NetpolComponent]) -> dict[str, list[RouteFacts]]:
    seen: set[int] = set()
    by_component: dict[str, list[RouteFacts]] = {}
    for comp in components:
        if id(comp.bundle) in seen:
            continue
        seen.add(id(comp.bundle))
        for app in comp.bundle.applications:
            facts = _route_facts(app)
            if facts is not None:
                by_component.setdefault(facts.component, []).append(facts)
    return by_component


def synthesize_network_policies(components: list[NetpolComponent], namespace: str, domain: str) -> None:
    """Append ``C-allow-ingress-traffic`` (and external backend) policies to the bundles."""
    by_component = _collect_facts(components)
    if not by_component:
        return
    by_name = {c.name: c for c in components}
    service_owner: dict[str, str] = {}
    for comp in components:
        service_owner.setdefault(backend_service_name(comp.config) or comp.name, comp.name)
    label_key = f"{domain}/component"
    local: dict[str, _Policy] = {}
    external: dict[str, _Policy] = {}
    for comp in components:
        for facts in by_component.get(comp.name, []):
            sources = traffic_sources(facts)
            if not sources:
                continue
            targets: dict[tuple[str, str], list[int | str]] = {}
            for backend in facts.backends:
                if backend.port is None:
                    continue
                if backend.implicit:
                    target = ("component", comp.name)
                elif backend.service in service_owner:
                    target = ("component", service_owner[backend.service])
                elif backend.selector:
                    target = ("service", backend.service)
                    known = external.get(backend.service)
                    if known is None:
                        external[backend.service] = _Policy(comp.bundle, dict(backend.selector))
                    elif known.selector != backend.selector:
                        raise TransformError(
                            f"external backend Service {go_quote(backend.service)} in namespace "
                            f"{go_quote(namespace)} given conflicting backendSelector values"
                        )
                else:
                    continue
                targets.setdefault(target, []).append(backend.port)
            for (kind, name), ports in targets.items():
                if kind == "component":
                    policy = local.get(name)
                    if policy is None:
                        owner = by_name[name]
                        selector = {label_key: component_label_value(owner.owner)}
                        policy = local[name] = _Policy(owner.bundle, selector)
                else:
                    policy = external[name]
                policy.add(sources, _sorted_ports(ports))
    names = {f"{name}{POLICY_SUFFIX}" for name in local}
    for service in sorted(external):
        policy_name = f"{service}{POLICY_SUFFIX}"
        if policy_name in names:
            raise TransformError(
                f"external backend Service {go_quote(service)} in namespace {go_quote(namespace)} collides with a "
                f"synthesized policy named {go_quote(policy_name)}"
            )
    for comp in components:
        policy = local.get(comp.name)
        if policy is not None:
            _append(policy, f"{comp.name}{POLICY_SUFFIX}", namespace, comp.owner)
    for service in sorted(external):
        _append(external[service], f"{service}{POLICY_SUFFIX}", namespace, None)


def _append(policy: _Policy, name: str, namespace: str, owner: str | None) -> None:
    obj: Object = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(name, namespace),
        "spec": {
            "podSelector": {"matchLabels": dict(policy.selector)},
            "policyTypes": ["Ingress"],
            "ingress": copy.deepcopy(policy.rules),
        },
    }
    policy.bundle.applications.append(TreeApplication(name, namespace, FixedObjects([obj]), owner))
