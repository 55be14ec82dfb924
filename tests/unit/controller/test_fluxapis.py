"""Missing Flux APIs named before anything is applied (issue 14)."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.reconcile.fluxapis import missing_flux_apis

DOMAIN = "oam-operator.dev"


def obj(api_version: str, kind: str, name: str, component: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if component:
        meta["labels"] = {f"{DOMAIN}/component": component}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


OBJECTS = [
    obj("source.toolkit.fluxcd.io/v1", "HelmRepository", "charts"),
    obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", "web", "web"),
    obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", "api", "api"),
    obj("v1", "ConfigMap", "cfg", "cfg"),
]


def test_every_missing_flux_api_is_named_once_with_its_component_and_the_fix() -> None:
    assert missing_flux_apis(OBJECTS, lambda api_version, kind: False, DOMAIN) == (
        "HelmRepository charts needs Flux's source-controller (source.toolkit.fluxcd.io); "
        "install Flux or use delivery: template; "
        'component "web": HelmRelease web needs Flux\'s helm-controller (helm.toolkit.fluxcd.io); '
        "install Flux or use delivery: template"
    )
    oci = [obj("source.toolkit.fluxcd.io/v1", "OCIRepository", "app", "app")]
    assert missing_flux_apis(oci, lambda api_version, kind: False, DOMAIN) == (
        'component "app": OCIRepository app needs Flux\'s source-controller (source.toolkit.fluxcd.io); install Flux')


def test_served_apis_and_apis_of_the_applications_own_crds_are_not_missing() -> None:
    assert missing_flux_apis(OBJECTS, lambda api_version, kind: True, DOMAIN) is None
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"},
           "spec": {"group": "helm.toolkit.fluxcd.io", "names": {"kind": "HelmRelease"}}}
    served = {("source.toolkit.fluxcd.io/v1", "HelmRepository")}
    assert missing_flux_apis([crd, *OBJECTS], lambda av, k: (av, k) in served, DOMAIN) is None
