"""Health by expression on the real control plane (docs/health.md): the library's rule, an
Application's own policy, a definition's and a ClusterProfile's rules turn an Application
``Error``/``HealthCheckFailed`` as soon as the custom resource reports failure, with a message
that names the expression and quotes the resource's condition; and Ready again when it recovers.

No controller runs for these kinds: the test writes their status itself, as cert-manager would.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from e2ekit import GROUP, VERSION, Kube, condition
from kubernetes import client, dynamic
from test_flux_delivery_e2e import flux_crd

from tools.devcluster.pytest_plugin import default_wait, wait_until

CERT_GROUP, WIDGET_GROUP = "cert-manager.io", "health-e2e.oam-operator.dev"
LIBRARY_CURRENT = ("status.?conditions.orValue([]).exists(e, e.type == 'Ready' && e.status == 'True' && "
                   "e.?observedGeneration.orValue(metadata.generation) == metadata.generation)")
LIBRARY_FAILED = (
    "status.?conditions.orValue([]).exists(e, e.type == 'Ready' && e.status == 'False' && "
    "e.?observedGeneration.orValue(metadata.generation) == metadata.generation && "
    "e.?reason.orValue('') != 'InProgress')")


@pytest.fixture
def crds(kube: Kube) -> None:
    """Certificate (cert-manager's group, so the library's rule applies) and Widget, left installed."""
    resources = dynamic.DynamicClient(kube.api).resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    extensions = client.ApiextensionsV1Api(kube.api)
    for group, kind in ((CERT_GROUP, "Certificate"), (WIDGET_GROUP, "Widget")):
        resources.server_side_apply(body=flux_crd(group, kind, f"{kind.lower()}s", "v1"), field_manager="health-e2e",
                                    force_conflicts=True)

    def established() -> bool:
        for name in ("certificates.cert-manager.io", f"widgets.{WIDGET_GROUP}"):
            conditions = extensions.read_custom_resource_definition(name).status.conditions or []
            if not any(c.type == "Established" and c.status == "True" for c in conditions):
                return False
        return True

    wait_until(established, default_wait(kube.cluster), "the CRDs to be Established")


@pytest.fixture
def cluster_objects(kube: Kube) -> Iterator[list[tuple[str, str]]]:
    made: list[tuple[str, str]] = []
    yield made
    for plural, name in made:
        try:
            kube.custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except client.ApiException as error:
            if error.status != 404:
                raise


def _inline(*objects: str) -> dict[str, Any]:
    return {"name": "res", "type": "manifests", "properties": {"inline": "---\n".join(objects)}}


def _certificate(namespace: str) -> str:
    return (f"apiVersion: {CERT_GROUP}/v1\nkind: Certificate\nmetadata: {{name: web, namespace: {namespace}}}\n"
            "spec: {secretName: web-tls}\n")


def _widget(namespace: str, name: str) -> str:
    return (f"apiVersion: {WIDGET_GROUP}/v1\nkind: Widget\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
            "spec: {size: 1}\n")


def _set_status(kube: Kube, group: str, plural: str, name: str, status: dict[str, Any]) -> float:
    """Write the object's status as its controller would; returns the moment it was written."""
    kube.custom.patch_namespaced_custom_object_status(group, "v1", kube.namespace, plural, name, {"status": status})
    return time.monotonic()


def _ready_condition(status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": reason, "message": message, "observedGeneration": 1,
            "lastTransitionTime": "2026-12-06T00:00:00Z"}


def _until_error(kube: Kube, name: str, since: float) -> tuple[dict[str, Any], float]:
    app = kube.wait_state(name, "Error", "HealthCheckFailed")
    return app, time.monotonic() - since


def test_the_library_and_a_policy_turn_an_application_error_and_ready_again(
        start_operator: Any, kube: Kube, crds: None) -> None:
    start_operator(kube.namespace)
    # The library's Certificate rule: no status yet reads as InProgress (kstatus would say Current).
    kube.apply_app("tls", {"components": [_inline(_certificate(kube.namespace))]})
    waiting = (f"Waiting for bundle tls (0/1 ready): Certificate web (health expression current (library) is not "
               f"true yet: {LIBRARY_CURRENT})")
    wait_until(lambda: (condition(kube.app("tls"), "Ready") or {}).get("message") == waiting,
               default_wait(kube.cluster), "the library's InProgress verdict")

    written = _set_status(kube, CERT_GROUP, "certificates", "web", {"conditions": [
        _ready_condition("False", "DoesNotExist", 'Issuer "ca" not found')]})
    app, took = _until_error(kube, "tls", written)
    print(f"library rule: Error {took:.2f} s after the Certificate reported Ready=False")
    assert condition(app, "Ready")["message"] == (
        f"Certificate web: health expression failed (library) is true: {LIBRARY_FAILED}; "
        'condition Ready=False (DoesNotExist): "Issuer \\"ca\\" not found"')

    written = _set_status(kube, CERT_GROUP, "certificates", "web", {"conditions": [
        _ready_condition("True", "Ready", "Certificate is up to date and has not expired")]})
    kube.wait_ready("tls")
    print(f"library rule: Ready {time.monotonic() - written:.2f} s after the Certificate reported Ready=True")

    # The Application's own rule wins over the library's for the same kind.
    own_failed = "status.conditions.exists(c, c.type == 'Ready' && c.reason == 'Expired')"
    kube.apply_app("tls", {"components": [_inline(_certificate(kube.namespace))], "policies": [{
        "name": "health", "type": "health-checks", "properties": {"expressions": [{
            "apiVersion": f"{CERT_GROUP}/v1", "kind": "Certificate", "failed": own_failed,
            "current": "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"}]}}]})
    kube.wait_ready("tls")  # the new generation
    written = _set_status(kube, CERT_GROUP, "certificates", "web", {"conditions": [
        _ready_condition("False", "Expired", "Certificate expired on 2026-12-01")]})
    app, took = _until_error(kube, "tls", written)
    print(f"policy rule: Error {took:.2f} s after the Certificate reported Expired")
    assert condition(app, "Ready")["message"] == (
        f'Certificate web: health expression failed (policy "health") is true: {own_failed}; '
        'condition Ready=False (Expired): "Certificate expired on 2026-12-01"')

    # A policy expression that does not compile is refused with its position; nothing changes.
    kube.apply_app("tls", {"components": [_inline(_certificate(kube.namespace))], "policies": [{
        "name": "health", "type": "health-checks", "properties": {"expressions": [{
            "apiVersion": f"{CERT_GROUP}/v1", "kind": "Certificate", "current": "status.conditions = 1"}]}}]})
    app = kube.wait_state("tls", "Error", "TransformFailed")
    assert condition(app, "Ready")["message"] == (
        'policy "health": expressions[0].current: 1:19: Syntax error: token recognition error at: \'= \'')
    assert kube.custom.get_namespaced_custom_object(CERT_GROUP, "v1", kube.namespace, "certificates", "web")


def test_a_definitions_and_a_profiles_rules_judge_their_kinds(start_operator: Any, kube: Kube, crds: None,
                                                              cluster_objects: list[tuple[str, str]]) -> None:
    start_operator(kube.namespace)
    suffix = kube.namespace[-6:]
    widget_type, profile = f"widget-{suffix}", f"{kube.namespace}-health"
    definition = {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ComponentDefinition", "metadata": {"name": f"{widget_type}.v1"},
        "spec": {"type": widget_type, "version": "v1",
                 "objects": [{"apiVersion": f"{WIDGET_GROUP}/v1", "kind": "Widget",
                              "metadata": {"name": "${context.componentName}"}, "spec": {"size": 1}}],
                 "health": [{"apiVersion": f"{WIDGET_GROUP}/v1", "kind": "Widget",
                             "current": "status.phase == 'Running'", "failed": "status.phase == 'Broken'"}]},
    }
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "componentdefinitions", definition)
    cluster_objects.append(("componentdefinitions", f"{widget_type}.v1"))
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": profile},
        "spec": {"health": [{"apiVersion": f"{WIDGET_GROUP}/v1", "kind": "Widget",
                             "current": "status.?ready.orValue(false)",
                             "failed": "status.?errors.orValue(0) > 3"}]}})
    cluster_objects.append(("clusterprofiles", profile))

    # The definition's rule judges the Widgets of the Applications that use the type.
    wait_until(lambda: (condition(kube.custom.get_cluster_custom_object(
        GROUP, VERSION, "componentdefinitions", f"{widget_type}.v1"), "Ready") or {}).get("status") == "True",
        default_wait(kube.cluster), "the definition to be loaded")
    kube.apply_app("typed", {"components": [{"name": "gadget", "type": widget_type}]})
    kube.wait_state("typed", "Processing")
    written = _set_status(kube, WIDGET_GROUP, "widgets", "gadget", {"phase": "Broken"})
    app, took = _until_error(kube, "typed", written)
    print(f"definition rule: Error {took:.2f} s after the Widget reported Broken")
    assert condition(app, "Ready")["message"] == (
        f'Widget gadget: health expression failed (ComponentDefinition "{widget_type}.v1") is true: '
        "status.phase == 'Broken'")
    _set_status(kube, WIDGET_GROUP, "widgets", "gadget", {"phase": "Running"})
    kube.wait_ready("typed")

    # The profile's rule judges the Widgets of the Applications that use the profile.
    kube.apply_app("profiled", {"profile": profile, "components": [_inline(_widget(kube.namespace, "plain"))]})
    kube.wait_state("profiled", "Processing")
    written = _set_status(kube, WIDGET_GROUP, "widgets", "plain", {"errors": 5, "conditions": [
        {"type": "Synced", "status": "False", "reason": "ApiError", "message": "quota exceeded"}]})
    app, took = _until_error(kube, "profiled", written)
    print(f"profile rule: Error {took:.2f} s after the Widget reported 5 errors")
    assert condition(app, "Ready")["message"] == (
        f'Widget plain: health expression failed (ClusterProfile "{profile}") is true: '
        'status.?errors.orValue(0) > 3; condition Synced=False (ApiError): "quota exceeded"')
    _set_status(kube, WIDGET_GROUP, "widgets", "plain", {"errors": 0, "ready": True, "conditions": []})
    kube.wait_ready("profiled")
