"""Backend resolution shared by the routing traits ``ingress`` and ``httproute`` (docs/transform.md#common-trait-rules,
docs/transform.md#routing-traits).

A route's *implicit* backend is the component's own Service: the component's backend service
name and service port, or the trait's ``servicePort``/``serviceName`` for a component that
declares no service port (a helm chart's Service, for example). A backend naming another
Service is *explicit* and gets no default port.

An implicit backend needs a known service port (the component's, or the trait's
``servicePort``): without one it is refused with "has no service port" whatever the path
says, since the path's port must match the Service's anyway. Decision where the spec is
silent: an implicit ``ingress`` path with ``portName`` and no ``port`` routes to that port
name; "cannot determine backend port" is kept as a guard for a port that resolves to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import port_number
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import ComponentConfig, backend_service_name, service_port
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote


@dataclass(frozen=True)
class ServiceTarget:
    """The implicit backend: Service name and port (0 = none)."""

    name: str
    port: int


def service_target(props: dict[str, Any], config: ComponentConfig, component: str) -> ServiceTarget:
    """Check ``servicePort``/``serviceName`` and resolve the implicit backend."""
    trait_port: int | None = None
    raw = props.get("servicePort")
    if raw is not None:
        trait_port = port_number(raw)
        if trait_port is None:
            raise ValidationError("servicePort must be a valid port number (1–65535)")
        existing = service_port(config)
        if existing:
            raise ValidationError(
                f"servicePort may not be set on a component that already exposes service port {existing}; "
                "use path-level 'port' or 'backend' overrides instead"
            )
    service_name = props.get("serviceName")
    named = service_name if isinstance(service_name, str) and service_name else ""
    if named and trait_port is None:
        raise ValidationError("serviceName requires a valid servicePort to also be set on the trait")
    default_name = backend_service_name(config) or component
    if trait_port is not None:
        return ServiceTarget(named or default_name, trait_port)
    return ServiceTarget(default_name, service_port(config))


def implicit_port(
    target: ServiceTarget, port: int | None, port_name: str, where: str, component: str, undetermined: str
) -> int | str:
    """The port of a backend on the component's own Service, or the refusal at ``where``."""
    if not target.port:
        raise ValidationError(
            f"{where}: component {go_quote(component)} has no service port; configure a service port or specify an "
            "explicit backend name (for helmchart components, set servicePort and optionally serviceName on the trait)"
        )
    if port is not None and port != target.port:
        raise ValidationError(
            f"{where}: cannot route implicit backend to port {port} — component service exposes port "
            f"{target.port}; specify an explicit backend name or match the component port"
        )
    resolved: int | str = port if port is not None else (port_name or target.port)
    if not resolved:
        raise ValidationError(f"{where}: cannot determine backend port — {undetermined}")
    return resolved


def service_schema() -> dict[str, PropertySchema]:
    """``servicePort``/``serviceName``: the implicit backend of a component without a service port."""
    return {
        "servicePort": PropertySchema(
            type="integer",
            description=(
                "Service port of the implicit backend, for a component that declares none (e.g. a helm chart's "
                "Service); refused on a component that has a service port."
            ),
        ),
        "serviceName": PropertySchema(
            type="string",
            description="Service name of the implicit backend; needs servicePort (default: the component's Service).",
        ),
    }


def annotations_schema(kind: str) -> PropertySchema:
    return PropertySchema(
        type="object",
        additional_properties=True,
        description=f"Annotations of the {kind}; values are stringified as Go's %v prints them.",
    )


def network_policy_schema() -> PropertySchema:
    """Platform-reserved ``networkPolicy`` (docs/transform.md#network-policies); its content is checked by the
    synthesis."""
    source = PropertySchema(
        type="object",
        additional_properties=True,
        description="Where route traffic comes from.",
        properties={
            "namespace": PropertySchema(type="string", description="Namespace of the traffic source (required)."),
            "podSelector": PropertySchema(
                type="object",
                additional_properties=True,
                description="Pods of the traffic source within that namespace (default: all).",
            ),
        },
    )
    return PropertySchema(
        type="object",
        additional_properties=True,
        platform_reserved=True,
        description="Platform-set traffic sources admitted by a synthesized NetworkPolicy to the routed pods.",
        properties={
            "trafficSources": PropertySchema(
                type="array",
                items=source,
                description="Traffic sources; [] disables the synthesis explicitly.",
            )
        },
    )
