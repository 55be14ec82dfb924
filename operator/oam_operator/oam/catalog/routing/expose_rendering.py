"""The ``expose`` capability rendering (docs/transform.md#routing-traits, docs/transform.md#evaluating-a-profile):
checked and defaulted once per profile.

The rendering says how the platform exposes services: through an ingress controller (class,
TLS issuer, nginx ssl and ext-auth settings) or through a Gateway (its name and namespace).
Settings of the other flavour are refused, so a profile cannot promise something the chosen
controller will not do.

Decisions where the spec is silent: a key set to null (or, for strings, to ``""``) counts as
absent; the checks run in this order: undeclared keys, value types (sorted by key:
``expose rendering: <key> must be a string`` / ``… must be a boolean`` /
``… authResponseHeaders must be a string or a list of strings``), ``controllerType`` (a
non-string is reported as not supported), then the flavour's checks in the order docs/transform.md#routing-traits lists
them; ``networkPolicy`` is checked by the NetworkPolicy synthesis (docs/transform.md#network-policies) when it is used.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import refuse_rendering_keys
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

TYPE = "expose"
INGRESS = "ingress"
GATEWAY = "gateway"
DEFAULT_GATEWAY_NAMESPACE = "gateway-system"
STRING_KEYS = (
    "allowedHostnameWildcard",
    "authSigninURL",
    "authURL",
    "certManagerClusterIssuer",
    "gatewayName",
    "gatewayNamespace",
    "ingressClassName",
)
BOOLEAN_KEYS = ("forceSslRedirect", "sslRedirect")
RENDERING_KEYS = (*STRING_KEYS, *BOOLEAN_KEYS, "authResponseHeaders", "controllerType", "networkPolicy")
#: ingress-only keys refused with controllerType gateway, grouped as their messages name them
INGRESS_ONLY: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ingressClassName",), "ingressClassName is"),
    (("certManagerClusterIssuer",), "certManagerClusterIssuer is"),
    (("sslRedirect", "forceSslRedirect"), "sslRedirect and forceSslRedirect are"),
    (("authURL", "authSigninURL", "authResponseHeaders"), "authURL, authSigninURL and authResponseHeaders are"),
)


def is_set(props: dict[str, Any], key: str) -> bool:
    value = props.get(key)
    return value is not None and value != ""


def controller_type(value: Any) -> str:
    """The controller type, or the refusal (also used when lowering merged properties)."""
    if value is None or value == "":
        raise ValidationError("controllerType is required")
    if value not in (INGRESS, GATEWAY):
        raise ValidationError(
            f'controllerType {go_quote(go_value(value))} is not supported (want "ingress" or "gateway")'
        )
    return str(value)


def only_for(controller: str) -> str:
    return f"only valid when controllerType is {go_quote(controller)}"


def validate_rendering(rendering: dict[str, Any]) -> dict[str, Any]:
    refuse_rendering_keys(TYPE, rendering, RENDERING_KEYS)
    try:
        _check_types(rendering)
        if controller_type(rendering.get("controllerType")) == INGRESS:
            _check_ingress(rendering)
        else:
            _check_gateway(rendering)
    except ValidationError as exc:
        raise ValidationError(f"{TYPE} rendering: {exc.message}") from exc
    return rendering


def _check_types(rendering: dict[str, Any]) -> None:
    for key in sorted(rendering):
        value = rendering[key]
        if value is None:
            continue
        if key in STRING_KEYS and not isinstance(value, str):
            raise ValidationError(f"{key} must be a string")
        if key in BOOLEAN_KEYS and not isinstance(value, bool):
            raise ValidationError(f"{key} must be a boolean")
        if key == "authResponseHeaders" and not is_header_list(value):
            raise ValidationError("authResponseHeaders must be a string or a list of strings")


def is_header_list(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(h, str) for h in value))


def _check_ingress(rendering: dict[str, Any]) -> None:
    if not is_set(rendering, "ingressClassName"):
        raise ValidationError(f'ingressClassName is required when controllerType is "{INGRESS}"')
    auth_url = rendering.get("authURL")
    if isinstance(auth_url, str) and "?" in auth_url:
        raise ValidationError("authURL must be a base URL without a query string")
    if (is_set(rendering, "authSigninURL") or is_set(rendering, "authResponseHeaders")) and not auth_url:
        raise ValidationError("authSigninURL and authResponseHeaders require authURL")
    if is_set(rendering, "gatewayName") or is_set(rendering, "gatewayNamespace"):
        raise ValidationError(f"gatewayName and gatewayNamespace are {only_for(GATEWAY)}")


def _check_gateway(rendering: dict[str, Any]) -> None:
    if not is_set(rendering, "gatewayName"):
        raise ValidationError(f'gatewayName is required when controllerType is "{GATEWAY}"')
    for keys, subject in INGRESS_ONLY:
        if any(is_set(rendering, key) for key in keys):
            raise ValidationError(f"{subject} {only_for(INGRESS)}")
    if not is_set(rendering, "gatewayNamespace"):
        rendering["gatewayNamespace"] = DEFAULT_GATEWAY_NAMESPACE
