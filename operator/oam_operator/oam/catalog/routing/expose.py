"""The ``expose`` trait lowering rule (docs/transform.md#routing-traits): "make this component reachable" without
knowing how the cluster does it.

The ClusterProfile's ``expose`` binding (required) says whether the platform routes through an
ingress controller or a Gateway; the rule lowers the trait into one sealed ``ingress`` or
``httproute`` trait accordingly, so the same Application works on both kinds of cluster. The
platform-owned settings are platform-reserved: an author cannot override the controller, the
issuer, the auth endpoint, the host wildcard or the gateway.

Decisions where the spec is silent: ``rules`` is an array of open objects (its shape is that of
the chosen controller: ingress rules or HTTPRoute rules, checked by the emitted trait's schema);
``authResponseHeaders`` is a comma-separated string or a list of header names (joined with
``,`` into the nginx annotation).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.routing.backends import annotations_schema, network_policy_schema, service_schema
from oam_operator.oam.catalog.routing.expose_lowering import lower_expose
from oam_operator.oam.catalog.routing.expose_rendering import DEFAULT_GATEWAY_NAMESPACE, TYPE, validate_rendering
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, ContractMetadata, LoweringContext, Schema
from oam_operator.oam.engine.registry import trait_lowering


def _reserved(kind: str, description: str, **extra: Any) -> PropertySchema:
    return PropertySchema(type=kind, platform_reserved=True, description=description, **extra)


def _strings(description: str, item: str) -> PropertySchema:
    return PropertySchema(type="array", items=PropertySchema(type="string", description=item), description=description)


def _schema() -> Schema:
    return {
        "controllerType": _reserved("string", "How the platform exposes services: ingress or gateway."),
        "certManagerClusterIssuer": _reserved(
            "string", "cert-manager ClusterIssuer that signs the Ingress certificate (ingress only)."
        ),
        "allowedHostnameWildcard": _reserved("string", "Host pattern (*.domain or an exact host) hosts must match."),
        "gatewayName": _reserved("string", "Gateway the HTTPRoute attaches to (gateway only)."),
        "gatewayNamespace": _reserved(
            "string", "Namespace of the Gateway (gateway only).", default=DEFAULT_GATEWAY_NAMESPACE
        ),
        "authURL": _reserved("string", "Base URL of the ext-auth service (ingress only)."),
        "authResponseHeaders": _reserved(
            "", "Response headers of the ext-auth service passed upstream: a comma-separated string or a list."
        ),
        "networkPolicy": network_policy_schema(),
        "rules": PropertySchema(
            type="array",
            items=PropertySchema(
                type="object",
                additional_properties=True,
                description="One rule, shaped as the chosen controller's (ingress rule or HTTPRoute rule).",
            ),
            description="Routing rules; with an ingress controller, hostnames alone expand to one rule per host.",
        ),
        "hostnames": _strings("Host names to expose.", "A host name."),
        "annotations": annotations_schema("Ingress or HTTPRoute"),
        "ingressClassName": PropertySchema(
            type="string", description="IngressClass of the Ingress (ingress only; default from the platform)."
        ),
        "secretName": PropertySchema(
            type="string", description="Secret of the platform-managed TLS certificate (ingress only; default C-tls)."
        ),
        "sslRedirect": PropertySchema(type="boolean", description="nginx ssl-redirect (ingress only)."),
        "forceSslRedirect": PropertySchema(type="boolean", description="nginx force-ssl-redirect (ingress only)."),
        "allowedGroups": _strings(
            "Groups admitted by the platform's ext-auth (ingress only; turns ext-auth on).", "A group name."
        ),
        "authSigninURL": PropertySchema(
            type="string", description="Sign-in URL for unauthenticated requests (ingress only, with allowedGroups)."
        ),
        **service_schema(),
        "name": PropertySchema(type="string", description="Name of the emitted Ingress or HTTPRoute."),
    }


@trait_lowering(TYPE)
class ExposeRule(BuiltinType):
    def trait_type(self) -> str:
        return TYPE

    def property_schema(self) -> Schema:
        return _schema()

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=TYPE, required_capability_keys=[TYPE])

    def capability_required(self) -> bool:
        return True

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        return validate_rendering(rendering)

    def lower_trait(self, trait: Trait, lctx: LoweringContext) -> list[Trait]:
        return [lower_expose(trait.properties, lctx.component.name)]
