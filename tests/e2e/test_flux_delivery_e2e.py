"""Delivery through Flux made explicit (issue 14), with Flux's CRDs and no Flux controller.

Without the CRDs the Application fails before anything is applied, naming the component and
what to install. With minimal HelmRepository/HelmRelease CRDs (what ``flux install`` serves,
reduced to the schema this test needs) the objects are created, but nobody reconciles them: they
stay InProgress and the Application's message says which controller is missing — never a
false Ready. A status written as Flux's controllers do (Ready of the current generation) makes
the Application Ready.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2ekit import Kube, condition
from kubernetes import client, dynamic

from tools.devcluster.pytest_plugin import default_wait, wait_until

FLUX = [("source.toolkit.fluxcd.io", "HelmRepository", "helmrepositories", "v1"),
        ("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", "v2")]
APP = {"components": [{"name": "web", "type": "helm", "properties": {
    "source": {"url": "https://charts.example.com"}, "chart": "web", "version": "1.0.0"}}]}


def flux_crd(group: str, kind: str, plural: str, version: str) -> dict[str, Any]:
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                 "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": open_object, "status": open_object}}}}]},
    }


@pytest.fixture
def flux_crds(kube: Kube) -> Iterator[Any]:
    extensions = client.ApiextensionsV1Api(kube.api)

    def remove() -> None:
        for group, _, plural, _ in FLUX:
            try:
                extensions.delete_custom_resource_definition(f"{plural}.{group}")
            except client.ApiException as error:
                if error.status != 404:
                    raise

        def gone() -> bool:
            names = {crd.metadata.name for crd in extensions.list_custom_resource_definition().items}
            return not names & {f"{plural}.{group}" for group, _, plural, _ in FLUX}

        wait_until(gone, default_wait(kube.cluster), "the Flux CRDs to go")

    remove()

    def install() -> None:
        resources = dynamic.DynamicClient(kube.api).resources.get(
            api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        for entry in FLUX:
            resources.server_side_apply(body=flux_crd(*entry), field_manager="flux-e2e", force_conflicts=True)

        def established() -> bool:
            for group, _, plural, _ in FLUX:
                conditions = extensions.read_custom_resource_definition(f"{plural}.{group}").status.conditions or []
                if not any(c.type == "Established" and c.status == "True" for c in conditions):
                    return False
            return True

        wait_until(established, default_wait(kube.cluster), "the Flux CRDs to be Established")

    yield install
    remove()


def test_flux_apis_missing_then_unreconciled_then_ready(start_operator: Any, kube: Kube, flux_crds: Any) -> None:
    start_operator(kube.namespace)
    kube.apply_app("charts", APP)
    app = kube.wait_state("charts", "Error", "MissingAPI")
    assert condition(app, "Ready")["message"] == (
        'component "web": HelmRepository web needs Flux\'s source-controller (source.toolkit.fluxcd.io); '
        'install Flux or use delivery: template; '
        'component "web": HelmRelease web needs Flux\'s helm-controller (helm.toolkit.fluxcd.io); '
        "install Flux or use delivery: template"
    )
    assert not (app["status"].get("inventory") or [])

    flux_crds()  # Flux's CRDs, no Flux controller: the objects are created and never reconciled
    custom = client.CustomObjectsApi(kube.api)

    def ready_message() -> str:
        return str((condition(kube.app("charts"), "Ready") or {}).get("message", ""))

    def reconcile_as_flux(group: str, plural: str, version: str) -> None:
        """What Flux's controller writes once it reconciled the current generation."""
        live = custom.get_namespaced_custom_object(group, version, kube.namespace, plural, "web")
        generation = live["metadata"]["generation"]
        custom.patch_namespaced_custom_object_status(group, version, kube.namespace, plural, "web", {"status": {
            "observedGeneration": generation,
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "ok",
                            "observedGeneration": generation, "lastTransitionTime": "2026-12-01T00:00:00Z"}]}})

    # The source applies first; nobody reconciles it, so the release waits behind it.
    source_waits = ("Waiting for bundle charts (0/1 ready): HelmRepository web (HelmRepository not reconciled "
                    "yet: no Ready condition (is Flux's source-controller running?))")
    wait_until(lambda: "source-controller running" in ready_message(), 120, "the Application to wait for Flux")
    assert ready_message() == source_waits
    app = kube.app("charts")
    assert (app["status"]["state"], condition(app, "Ready")["status"]) == ("Processing", "Unknown")

    reconcile_as_flux("source.toolkit.fluxcd.io", "helmrepositories", "v1")
    release_waits = ("Waiting for bundle charts-00 (0/1 ready): HelmRelease web (HelmRelease not reconciled "
                     "yet: no Ready condition (is Flux's helm-controller running?))")
    wait_until(lambda: "helm-controller" in ready_message(), 120, "the Application to wait for the helm-controller")
    assert ready_message() == release_waits
    assert kube.app("charts")["status"]["state"] == "Processing"

    reconcile_as_flux("helm.toolkit.fluxcd.io", "helmreleases", "v2")
    kube.wait_ready("charts")
