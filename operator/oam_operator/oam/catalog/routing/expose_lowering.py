"""Lowering ``expose`` (docs/transform.md#routing-traits): the merged properties become one ``ingress`` or
``httproute``.

The platform's controller choice, TLS issuer, auth endpoint and host wildcard arrive through the
rendering (platform-reserved), the team writes hosts and routes; the lowering turns the
platform settings into what the terminal trait understands (annotations, ``tls``,
``parentRefs``) and drops them, so the emitted trait holds only properties its own schema
declares.

Decisions where the spec is silent:

* ``hostnames`` with ``rules`` is not expanded but its hosts are still checked against the
  wildcard and it is dropped (an Ingress has no hostnames); rule hosts are checked in rule
  order, then the hostnames not already checked; a rule without a string host is left to
  ``ingress`` to refuse;
* ``hostnames`` that is not a list of strings is ``hostnames entries must be strings``
  (as ``httproute``), ``annotations`` that are not a mapping ``'annotations' must be a map``,
  a non-boolean ``sslRedirect``/``forceSslRedirect`` ``<key> must be a boolean``,
  ``allowedGroups`` entries that are not non-empty strings
  ``allowedGroups entries must be non-empty strings``;
* ``tls`` hosts are the rule hosts that are non-empty, de-duplicated in order;
* ``sslRedirect``/``forceSslRedirect`` and the ext-auth settings replace an authored annotation
  of the same key (they are the typed form of those settings);
* an authored ``tls`` is dropped in both flavours (it is not an ``expose`` property);
* with ``controllerType: gateway`` an authored ``ingressClassName`` is refused like the other
  ingress-only keys (``ingressClassName is only valid when controllerType is "ingress"``);
  the rule does not invent ``rules``: an ``httproute`` needs them, so ``hostnames`` alone is
  refused by the emitted-trait check (docs/transform.md#emitted-elements);
* without an evaluated rendering (a library caller) ``controllerType``, ``ingressClassName``
  and ``gatewayName`` are checked again with the rendering messages, without the
  ``expose rendering:`` prefix; platform keys of the other flavour are then dropped, not
  refused (an evaluated rendering cannot hold them).
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.routing.expose_rendering import (
    DEFAULT_GATEWAY_NAMESPACE,
    GATEWAY,
    INGRESS,
    controller_type,
    is_set,
    only_for,
)
from oam_operator.oam.catalog.routing.ingress import check_hostname
from oam_operator.oam.document.document import Trait
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_value

ISSUER_ANNOTATION = "cert-manager.io/cluster-issuer"
NGINX = "nginx.ingress.kubernetes.io/"
SSL_ANNOTATIONS = (("sslRedirect", NGINX + "ssl-redirect"), ("forceSslRedirect", NGINX + "force-ssl-redirect"))
#: authorable keys refused with controllerType gateway, in the order they are checked
GATEWAY_REFUSED = (
    "sslRedirect",
    "forceSslRedirect",
    "allowedGroups",
    "authSigninURL",
    "secretName",
    "ingressClassName",
)
#: platform keys consumed by the lowering; they never reach the emitted trait
PLATFORM_KEYS = (
    "controllerType",
    "certManagerClusterIssuer",
    "allowedHostnameWildcard",
    "gatewayName",
    "gatewayNamespace",
    "authURL",
    "authResponseHeaders",
)


def lower_expose(props: dict[str, Any], component: str) -> Trait:
    """The terminal trait for the merged ``expose`` properties of ``component``."""
    if controller_type(props.get("controllerType")) == INGRESS:
        return Trait("ingress", _to_ingress(copy.deepcopy(props), component))
    return Trait("httproute", _to_httproute(copy.deepcopy(props)))


def _hostnames(props: dict[str, Any]) -> list[str]:
    value = props.get("hostnames")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        raise ValidationError("hostnames entries must be strings")
    return value


def _check_hosts(hosts: list[str], wildcard: Any) -> None:
    if isinstance(wildcard, str) and wildcard:
        for host in dict.fromkeys(hosts):
            check_hostname(host, wildcard)


def _rule_hosts(rules: Any) -> list[str]:
    """The string hosts of the rules, in order (a missing host is left to ``ingress`` to refuse)."""
    if not isinstance(rules, list):
        return []
    return [r["host"] for r in rules if isinstance(r, dict) and isinstance(r.get("host"), str)]


def _to_ingress(props: dict[str, Any], component: str) -> dict[str, Any]:
    if not is_set(props, "ingressClassName"):
        raise ValidationError(f'ingressClassName is required when controllerType is "{INGRESS}"')
    hostnames = _hostnames(props)
    props.pop("hostnames", None)
    if hostnames and not props.get("rules"):
        props["rules"] = [{"host": host, "paths": [{}]} for host in hostnames]
    hosts = _rule_hosts(props.get("rules"))
    _check_hosts(hosts + hostnames, props.get("allowedHostnameWildcard"))
    secret_written = "secretName" in props  # presence, as kurel: a written null is no secret name
    secret = props.pop("secretName", None)
    if secret_written and (not isinstance(secret, str) or not secret):
        raise ValidationError("secretName must be a non-empty string")
    props.pop("tls", None)
    annotations = _annotations(props)
    issuer = props.get("certManagerClusterIssuer")
    if is_set(props, "certManagerClusterIssuer"):
        authored = annotations.get(ISSUER_ANNOTATION)
        if authored is not None and go_value(authored) != go_value(issuer):
            raise ValidationError(
                f"annotation {ISSUER_ANNOTATION} is platform-managed by the expose trait and cannot be overridden"
            )
        annotations[ISSUER_ANNOTATION] = go_value(issuer)
        tls_hosts = list(dict.fromkeys(h for h in hosts if h))
        props["tls"] = [{"hosts": tls_hosts, "secretName": secret or f"{component}-tls"}]
    elif secret_written:
        raise ValidationError("secretName requires platform-managed TLS (no cert-manager cluster-issuer capability)")
    for key, annotation in SSL_ANNOTATIONS:
        value = props.pop(key, None)
        if value is not None:
            if not isinstance(value, bool):
                raise ValidationError(f"{key} must be a boolean")
            annotations[annotation] = "true" if value else "false"
    _ext_auth(props, annotations)
    for key in PLATFORM_KEYS:
        props.pop(key, None)
    if annotations:
        props["annotations"] = annotations
    return props


def _annotations(props: dict[str, Any]) -> dict[str, Any]:
    value = props.pop("annotations", None)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("'annotations' must be a map")
    return value


def _ext_auth(props: dict[str, Any], annotations: dict[str, Any]) -> None:
    """``allowedGroups`` turns on nginx ext-auth against the platform's ``authURL``."""
    groups = props.pop("allowedGroups", None)
    auth_url = props.pop("authURL", None)
    signin = props.pop("authSigninURL", None)
    headers = props.pop("authResponseHeaders", None)
    if groups is None:
        return
    if not isinstance(groups, list) or not groups:
        raise ValidationError("allowedGroups must not be empty (ext-auth requires at least one group)")
    if not all(isinstance(g, str) and g for g in groups):
        raise ValidationError("allowedGroups entries must be non-empty strings")
    if not isinstance(auth_url, str) or not auth_url:
        raise ValidationError("ext-auth is not offered on this platform (the expose capability has no authURL)")
    annotations[NGINX + "auth-url"] = f"{auth_url}?allowed_groups={','.join(groups)}"
    if isinstance(signin, str) and signin:
        annotations[NGINX + "auth-signin"] = signin
    if headers:
        annotations[NGINX + "auth-response-headers"] = headers if isinstance(headers, str) else ",".join(headers)


def _to_httproute(props: dict[str, Any]) -> dict[str, Any]:
    for key in GATEWAY_REFUSED:
        # present at all, even null or empty: an ingress-only key means the author expected an Ingress
        if key in props:
            raise ValidationError(f"{key} is {only_for(INGRESS)}")
    _check_hosts(_hostnames(props), props.get("allowedHostnameWildcard"))
    gateway = props.get("gatewayName")
    if not isinstance(gateway, str) or not gateway:
        raise ValidationError(f'gatewayName is required when controllerType is "{GATEWAY}"')
    namespace = props.get("gatewayNamespace")
    if not isinstance(namespace, str) or not namespace:
        namespace = DEFAULT_GATEWAY_NAMESPACE
    for key in (*PLATFORM_KEYS, *GATEWAY_REFUSED, "tls"):
        props.pop(key, None)
    props["parentRefs"] = [{"name": gateway, "namespace": namespace}]
    return props
