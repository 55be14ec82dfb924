"""Delivery through Flux made explicit (docs/operator.md#the-checks): which Flux controller a generated object needs.

``helm`` and ``oci`` components generate Flux objects (HelmRelease, HelmRepository,
OCIRepository, Kustomization). Without Flux's CRDs the API server answers "no matches for kind",
which names neither the component nor the fix; :func:`missing_flux_apis` checks the generated
objects against discovery before anything is applied and returns one message per missing API:

    component "web": HelmRelease web needs Flux's helm-controller (helm.toolkit.fluxcd.io);
    install Flux or use delivery: template

(``or use delivery: template`` for the Helm kinds only: OCI delivery has no template mode). An
API served by a CRD among the Application's own objects is not missing: it is applied first.
The readiness half — a Flux object is Ready only with a ``Ready`` condition of its current
generation — lives in the reconciler's status analyzer (``reconciler/status.py``), next to
kstatus, because it is about the object, not the transform.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["FLUX_CONTROLLERS", "missing_flux_apis"]

FLUX_CONTROLLERS: dict[str, str] = {
    "helm.toolkit.fluxcd.io": "Flux's helm-controller",
    "source.toolkit.fluxcd.io": "Flux's source-controller",
    "kustomize.toolkit.fluxcd.io": "Flux's kustomize-controller",
    "notification.toolkit.fluxcd.io": "Flux's notification-controller",
    "image.toolkit.fluxcd.io": "Flux's image-reflector-controller",
}
_HELM_KINDS = frozenset({"HelmRelease", "HelmRepository", "HelmChart"})


def _crd_kinds(objects: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    kinds = set()
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith(
            "apiextensions.k8s.io/"
        ):
            spec = obj.get("spec") or {}
            kinds.add((str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", ""))))
    return kinds


def missing_flux_apis(
    objects: Sequence[Mapping[str, Any]], served: Callable[[str, str], bool], domain: str
) -> str | None:
    """One ``; ``-joined message for the Flux APIs the cluster does not serve, or ``None``.

    ``served(apiVersion, kind)`` asks discovery; an error there is no verdict (the reconciler
    reports it as it would anyway), so callers pass a function that answers ``True`` on failure.
    """
    own = _crd_kinds(objects)
    messages: list[str] = []
    seen: set[tuple[str, str]] = set()
    for obj in objects:
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        controller = FLUX_CONTROLLERS.get(group)
        if controller is None or (group, kind) in own or (api_version, kind) in seen:
            continue
        seen.add((api_version, kind))
        if served(api_version, kind):
            continue
        meta = obj.get("metadata") or {}
        component = (meta.get("labels") or {}).get(f"{domain}/component")
        prefix = f'component "{component}": ' if component else ""
        advice = "install Flux or use delivery: template" if kind in _HELM_KINDS else "install Flux"
        messages.append(f"{prefix}{kind} {meta.get('name', '')} needs {controller} ({group}); {advice}")
    return "; ".join(messages) or None
