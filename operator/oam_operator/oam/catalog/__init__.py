"""The built-in component and trait types, by family.

Each family is a subpackage holding its types and the helpers only they use: ``workloads``
(webservice, worker, statefulset, daemonset, cronjob and the pod-spec building they share,
plus the ``scaler`` and ``configmap`` traits that decorate them), ``manifests`` (passthrough,
manifests, crd), ``flux`` (helm/helmchart and oci: Flux sources and their releases),
``postgresql`` (a CloudNativePG cluster), ``routing`` (ingress, httproute and the ``expose``
lowering rule), ``secrets`` (certificate, external-secret), ``storage`` (pvc, volsync),
``security`` (networkpolicy, cilium-networkpolicy, the traffic-source NetworkPolicy synthesis,
rbac, security-context, prune-protection) and ``shared`` (building blocks several families use).

Each type's handler class declares itself with ``@component``/``@trait``/``@trait_lowering``
(``engine.registry``); importing its module below is what puts it in the built-in set, so this
list is the catalog's table of contents. A type of the specification's allow-list that no module
declares is refused by the transform as not implemented; ``fluxcd-patches``/``fluxcd-postbuild``
never get a handler and are refused with the delivery hint.
"""

from __future__ import annotations

from oam_operator.oam.catalog.flux import helm, oci
from oam_operator.oam.catalog.manifests import crd, manifests, passthrough
from oam_operator.oam.catalog.postgresql import postgresql
from oam_operator.oam.catalog.routing import expose, httproute, ingress
from oam_operator.oam.catalog.secrets import certificate, external_secret
from oam_operator.oam.catalog.security import (
    cilium_networkpolicy,
    networkpolicy,
    prune_protection,
    rbac,
    security_context,
)
from oam_operator.oam.catalog.storage import pvc, volsync
from oam_operator.oam.catalog.workloads import configmap, cronjob, daemonset, scaler, statefulset, webservice, worker
from oam_operator.oam.engine.registry import Registrar, register_declared

# The imports above declare the built-in types; this names them for linters and readers.
__all__ = [
    "certificate",
    "cilium_networkpolicy",
    "configmap",
    "crd",
    "cronjob",
    "daemonset",
    "expose",
    "external_secret",
    "helm",
    "httproute",
    "ingress",
    "manifests",
    "networkpolicy",
    "oci",
    "passthrough",
    "postgresql",
    "prune_protection",
    "pvc",
    "rbac",
    "register_builtin_catalog",
    "scaler",
    "security_context",
    "statefulset",
    "volsync",
    "webservice",
    "worker",
]


def register_builtin_catalog(registrar: Registrar) -> None:
    """Register every built-in component type, trait type and trait lowering rule."""
    register_declared(registrar)
