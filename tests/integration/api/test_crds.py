"""The checked-in CRDs on a real API server (docs/operator.md#the-application-resource,
docs/operator.md#the-clusterprofile-resource).

The CRDs are applied from ``crds/`` with ``kubectl apply --server-side`` (what a user does) and
left installed: other tests of the session use them, and the control plane is thrown away at the
end (against an external cluster they are cluster-scoped objects of the project's own group).
"""

from __future__ import annotations

import copy
import itertools
import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from oam_operator.api import Application, ClusterProfile
from tools.devcluster import ClusterHandle, find_binaries
from tools.devcluster.pytest_plugin import default_wait, require_cluster, wait_until

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "crds"
GROUP, VERSION = "oam-operator.dev", "v1alpha1"
CRD_NAMES = ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev",
             "componentdefinitions.oam-operator.dev", "traitdefinitions.oam-operator.dev")


def _kubectl_path() -> str:
    found = find_binaries().kubectl
    path = str(found) if found else shutil.which("kubectl")
    if path is None:
        message = "kubectl not found (build the devcluster binaries or put kubectl on PATH)"
        if require_cluster():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def kubectl(cluster: ClusterHandle, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [_kubectl_path(), "--kubeconfig", cluster.kubeconfig, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check and result.returncode != 0:
        pytest.fail(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}", pytrace=False)
    return result


def _established(api: Any, name: str) -> bool:
    crd: Any = client.ApiextensionsV1Api(api).read_custom_resource_definition(name)
    conditions = {c.type: c.status for c in (crd.status.conditions or [])}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


@pytest.fixture
def crds(cluster: ClusterHandle, kube_api: Any) -> None:
    """Apply ``crds/`` (idempotent) and wait until both CRDs are Established."""
    kubectl(cluster, "apply", "--server-side", "--force-conflicts", "-f", str(CRDS))
    for name in CRD_NAMES:
        wait_until(partial(_established, kube_api, name), default_wait(cluster), f"CRD {name} Established")


@pytest.fixture
def custom(kube_api: Any, crds: None) -> Any:
    """``CustomObjectsApi`` (its results are plain JSON objects, typed ``Any`` here)."""
    return client.CustomObjectsApi(kube_api)


def application(name: str, **spec: Any) -> dict[str, Any]:
    """An example Application (docs/operator.md#spec-fields) without a ServiceAccount, plus ``spec`` overrides."""
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Application",
        "metadata": {"name": name},
        "spec": {
            "interval": "10m",
            "timeout": "15m",
            "components": [
                {
                    "name": "db",
                    "type": "postgresql",
                    "annotations": {"oam-operator.dev/tier": "infra"},
                    "properties": {"version": "16", "storageSize": "10Gi", "nested": {"list": [1, {"a": None}]}},
                },
                {
                    "name": "web",
                    "type": "webservice",
                    "properties": {"image": "ghcr.io/example/web:1.4.2", "port": 8080},
                    "traits": [{"type": "scaler", "properties": {"minReplicas": 2, "maxReplicas": 5}}],
                },
            ],
            "policies": [
                {
                    "name": "order",
                    "type": "dependency",
                    "properties": {"rules": [{"component": "web", "dependsOn": ["db"]}]},
                }
            ],
        },
    }
    body["spec"].update(spec)
    return body


STATUS: dict[str, Any] = {
    "observedGeneration": 1,
    "state": "Processing",
    "conditions": [
        {
            "type": "Ready",
            "status": "Unknown",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-03-01T10:04:05Z",
            "reason": "Processing",
            "message": "Waiting for bundle shop-01 (0/1 ready): Deployment web (Available: 0/2)",
        },
        {
            "type": "Reconciling",
            "status": "True",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-03-01T10:04:05Z",
            "reason": "Processing",
            "message": "Waiting for bundle shop-01 (0/1 ready): Deployment web (Available: 0/2)",
        },
    ],
    "objects": 3,
    "readyObjects": 2,
    "bundles": [
        {
            "name": "shop-00",
            "dependsOn": [],
            "objects": 2,
            "ready": 2,
            "state": "Ready",
            "waves": {"first": 0, "last": 0},
        },
        {
            "name": "shop-01",
            "dependsOn": ["shop-00"],
            "objects": 1,
            "ready": 0,
            "state": "Applying",
            "waves": {"first": 1, "last": 1},
        },
    ],
    "inventory": [
        {
            "group": "apiextensions.k8s.io",
            "version": "v1",
            "kind": "CustomResourceDefinition",
            "name": "widgets.example.com",
            "adoptionPolicy": "IfUnowned",
            "reconcilePolicy": "OnObjectChange",
            "updatePolicy": "SsaMerge",
            "deletePolicy": "Delete",
            "applyOrder": 0,
            "deleteOrder": 1,
            "managedTypes": [{"group": "example.com", "version": "*", "kind": "Widget"}],
            "digest": "a" * 64,
            "phase": "Ready",
            "status": "Current",
            "lastAppliedAt": "2026-03-01T10:04:05Z",
        },
        {
            "group": "",
            "version": "v1",
            "kind": "Service",
            "namespace": "shop",
            "name": "db",
            "adoptionPolicy": "IfUnowned",
            "reconcilePolicy": "OnObjectOrComponentChange",
            "updatePolicy": "SsaMerge",
            "deletePolicy": "Orphan",
            "applyOrder": 0,
            "deleteOrder": 1,
            "digest": "b" * 64 + "@" + "c" * 64,
            "phase": "Ready",
            "status": "Current",
            "lastAppliedAt": "2026-03-01T10:04:05Z",
        },
        {
            "group": "apps",
            "version": "v1",
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "adoptionPolicy": "Never",
            "reconcilePolicy": "Once",
            "updatePolicy": "Replace",
            "deletePolicy": "OrphanOnDelete",
            "applyOrder": 1,
            "deleteOrder": 0,
            "digest": "__once__",
            "phase": "Creating",
            "status": "InProgress",
            "lastAppliedAt": "2026-03-01T10:04:06Z",
        },
    ],
    "profile": "",
    "appliedGeneration": 1,
    "lastAppliedAt": "2026-03-01T10:00:00Z",
    "processingDigest": "d" * 64,
    "processingSince": "2026-03-01T10:04:05Z",
    "lastProcessingDigest": "d" * 64,
    "revision": 2,
    "lastHandledReconcileAt": "2026-03-01T10:03:00+01:00",
}


def _rejection(error: ApiException) -> str:
    """The API server's answer: its raw body and, decoded, its message (quotes unescaped)."""
    assert error.status == 422, f"expected 422, got {error.status}: {error.body}"
    try:
        message = str(json.loads(error.body).get("message") or "")
    except (TypeError, ValueError):
        message = ""
    return f"{error.body}\n{message}"


def test_both_crds_apply_and_become_established(cluster: ClusterHandle, kube_api: Any, crds: None) -> None:
    for name in CRD_NAMES:
        assert _established(kube_api, name)
    resources = client.CustomObjectsApi(kube_api).get_api_resources(GROUP, VERSION)
    by_name = {r.name: r for r in resources.resources}
    assert by_name["applications"].short_names == ["oamapp", "oapp"]
    assert by_name["applications"].categories == ["oam"]
    assert by_name["applications"].namespaced is True
    assert "applications/status" in by_name
    assert by_name["clusterprofiles"].short_names == ["oamprofile", "oamprofiles"]
    assert by_name["clusterprofiles"].namespaced is False
    assert "clusterprofiles/status" in by_name  # the Ready condition (docs/multicluster.md#the-clusterprofiles-status)
    for plural, short in (("componentdefinitions", "compdef"), ("traitdefinitions", "traitdef")):
        assert (by_name[plural].short_names, by_name[plural].namespaced) == ([short], False)
        assert f"{plural}/status" in by_name  # the Ready condition (docs/definitions.md#the-operator)
    # the example definitions are what the schema accepts
    examples = kubectl(cluster, "apply", "--dry-run=server", "-f", str(CRDS.parent / "examples" / "definitions"))
    assert examples.stdout.splitlines() == [
        "componentdefinition.oam-operator.dev/web-app.v1 created (server dry run)",
        "traitdefinition.oam-operator.dev/pod-disruption.v1 created (server dry run)"], examples.stderr
    # Applying the same files again changes nothing (the generator's output is stable).
    again = kubectl(cluster, "apply", "--server-side", "--force-conflicts", "-f", str(CRDS))
    assert "serverside-applied" in again.stdout


def test_application_round_trips_with_status_through_the_status_subresource(custom: Any, namespace: str) -> None:
    body = application("shop")
    body["spec"]["components"][0]["unknownField"] = "pruned"
    body["status"] = {"state": "Ready"}  # ignored on create: status is a subresource
    created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    assert "status" not in created
    spec = created["spec"]
    # Unknown fields are pruned; free-form properties are kept exactly; constant defaults are applied,
    # operator-setting defaults are not.
    assert "unknownField" not in spec["components"][0]
    assert spec["components"][0]["properties"] == body["spec"]["components"][0]["properties"]
    assert spec["components"][0]["traits"] == []
    assert spec["components"][1]["traits"] == body["spec"]["components"][1]["traits"]
    assert spec["policies"] == body["spec"]["policies"]
    assert {k: spec[k] for k in ("profile", "serviceAccountName", "suspend", "deletePolicy")} == {
        "profile": "",
        "serviceAccountName": "",
        "suspend": False,
        "deletePolicy": "Delete",
    }
    assert not {"adoptionPolicy", "updatePolicy"} & set(spec)
    assert (spec["interval"], spec["timeout"]) == ("10m", "15m")

    patched = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "applications", "shop", {"status": STATUS}
    )
    assert patched["status"] == STATUS  # every field declared: nothing pruned
    read = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "applications", "shop")
    assert read["status"] == STATUS
    model = Application.model_validate(read)
    assert model.to_json() == read
    assert model.status is not None and model.status.inventory is not None
    assert [item.to_json() for item in model.status.inventory] == STATUS["inventory"]

    # A status change through the main resource is ignored.
    read["status"]["state"] = "Error"
    replaced = custom.replace_namespaced_custom_object(GROUP, VERSION, namespace, "applications", "shop", read)
    assert replaced["status"]["state"] == "Processing"

    # "Fields that disappeared set to null" (docs/operator.md#backoff-and-timeouts) removes them.
    cleared = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "applications", "shop", {"status": {"processingSince": None}}
    )
    assert "processingSince" not in cleared["status"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("interval", "10s", "interval must be at least 30s"),
        ("interval", "29.9s", "interval must be at least 30s"),
        ("timeout", "9s", "timeout must be at least 10s"),
        ("timeout", "500ms", "timeout must be at least 10s"),
        ("interval", "10 minutes", "spec.interval: Invalid value"),
        ("timeout", "-1h", "spec.timeout: Invalid value"),
        ("deletePolicy", "OrphanOnDelete", "spec.deletePolicy: Unsupported value"),
        ("adoptionPolicy", "Sometimes", "spec.adoptionPolicy: Unsupported value"),
        ("serviceAccountName", "Not_A_Name", "spec.serviceAccountName: Invalid value"),
        ("drift", "Sometimes", 'spec.drift: Unsupported value: "Sometimes": supported values: "Correct", "Report"'),
    ],
)
def test_the_api_server_rejects_invalid_spec_values(
    custom: Any, namespace: str, field: str, value: str, message: str
) -> None:
    with pytest.raises(ApiException) as raised:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "applications", application("bad", **{field: value})
        )
    assert message in _rejection(raised.value)


def test_the_minimum_durations_are_accepted(custom: Any, namespace: str) -> None:
    created = custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "applications", application("edge", interval="30s", timeout="0.5m1s")
    )
    assert (created["spec"]["interval"], created["spec"]["timeout"]) == ("30s", "0.5m1s")


def test_the_api_server_rejects_duplicate_component_and_policy_names(custom: Any, namespace: str) -> None:
    body = application("dup")
    body["spec"]["components"].append({"name": "web", "type": "worker"})
    with pytest.raises(ApiException) as raised:
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    text = _rejection(raised.value)
    assert "spec.components[2]: Duplicate value" in text and '\\"name\\":\\"web\\"' in text

    body = application("dup", policies=[{"name": "p", "type": "dependency"}, {"name": "p", "type": "placement"}])
    with pytest.raises(ApiException) as raised:
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    assert "spec.policies[1]: Duplicate value" in _rejection(raised.value)


def test_the_api_server_enforces_list_limits(custom: Any, namespace: str) -> None:
    with pytest.raises(ApiException) as raised:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "applications", application("empty", components=[])
        )
    assert "spec.components: Invalid value" in _rejection(raised.value)
    traits = [{"type": "env"}] * 65
    body = application("many", components=[{"name": "web", "type": "webservice", "traits": traits}])
    with pytest.raises(ApiException) as raised:
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    assert "spec.components[0].traits: Too many: 65: must have at most 64 items" in _rejection(raised.value)


def test_kubectl_explain_documents_the_components(cluster: ClusterHandle, crds: None) -> None:
    def explained() -> str | None:
        result = kubectl(cluster, "explain", "application.spec.components", check=False)
        return result.stdout if result.returncode == 0 and "traits" in result.stdout else None

    text = wait_until(explained, default_wait(cluster), "kubectl explain application.spec.components")
    assert "Components of the Application (1 to 1000), keyed by name." in text
    for field, description in [
        ("annotations", "Annotations of the component"),
        ("name", "Name of the component, unique within the Application."),
        ("properties", "Type-specific properties"),
        ("traits", "Traits of the component, applied in order; at most 64."),
        ("type", "Component type, for example webservice, worker or manifests."),
    ]:
        assert field in text and description in text, f"{field}: {description!r} missing from:\n{text}"
    assert "-required-" in text

    traits = kubectl(cluster, "explain", "application.spec.components.traits").stdout
    assert "Trait type, for example scaler, ingress or env." in traits
    status = kubectl(cluster, "explain", "application.status.inventory").stdout
    assert "lastAppliedAt" in status and "managedTypes" in status
    profile = kubectl(cluster, "explain", "clusterprofile.spec", "--api-version", f"{GROUP}/{VERSION}").stdout
    assert "gitopsEngine" in profile and "capabilities" in profile


def table_cells(lines: list[str]) -> dict[str, str]:
    """The first row of a ``kubectl get`` table, by column (columns start where their header starts)."""
    header, row = lines[0], lines[1]
    starts = [i for i, c in enumerate(header) if c != " " and (i == 0 or header[i - 1] == " ")]
    bounds = [*starts, max(len(header), len(row))]
    return {header[a:b].strip(): row[a:b].strip() for a, b in itertools.pairwise(bounds)}


DRIFT = ("Deployment web (spec.template.spec.containers[name=web].image) changed by another field manager; left as "
         "it is (spec.drift: Report)")


def test_printer_columns_show_with_kubectl_get_oapp(cluster: ClusterHandle, custom: Any, namespace: str) -> None:
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", application("shop"))
    status = copy.deepcopy(STATUS)
    status.update(state="Ready", objects=3, readyObjects=3, revision=4, summary="Applied revision 4: 3 objects ready")
    status["conditions"] = [
        {
            "type": "Ready",
            "status": "True",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-03-01T10:04:05Z",
            "reason": "Ready",
            "message": "Applied revision 4: 3 objects ready",
        },
        {
            "type": "Drifted",
            "status": "True",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-03-01T10:05:05Z",
            "reason": "DriftDetected",
            "message": DRIFT,
        },
    ]
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, "applications", "shop", {"status": status})

    lines = kubectl(cluster, "get", "oapp", "-n", namespace).stdout.splitlines()
    cells = table_cells(lines)
    assert list(cells) == ["NAME", "READY", "STATUS", "CLUSTERS", "AGE"]
    assert (cells["NAME"], cells["READY"], cells["STATUS"]) == ("shop", "True", "Applied revision 4: 3 objects ready")
    assert cells["CLUSTERS"] == ""  # no topology policy (docs/multicluster.md#topology)
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, "applications", "shop",
                                                 {"status": {"clusterSummary": "3/4"}})
    assert table_cells(kubectl(cluster, "get", "oapp", "-n", namespace).stdout.splitlines())["CLUSTERS"] == "3/4"

    wide = table_cells(kubectl(cluster, "get", "oamapp", "-n", namespace, "-o", "wide").stdout.splitlines())
    assert list(wide) == ["NAME", "READY", "STATUS", "CLUSTERS", "AGE", "STATE", "OBJECTS", "REVISION", "MESSAGE",
                          "DRIFT"]
    assert (wide["STATE"], wide["OBJECTS"], wide["REVISION"], wide["MESSAGE"], wide["DRIFT"]) == (
        "Ready", "3", "4", "Applied revision 4: 3 objects ready", DRIFT)  # the drift text in full (issue 44)

    category = kubectl(cluster, "get", "oam", "-n", namespace).stdout
    assert "application.oam-operator.dev/shop" in category


@pytest.fixture
def profile_name(kube_api: Any, crds: None) -> Iterator[str]:
    name = f"t-profile-{secrets.token_hex(3)}"
    yield name
    try:
        client.CustomObjectsApi(kube_api).delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", name)
    except ApiException as error:
        if error.status != 404:
            raise


def test_cluster_profile_round_trips_and_shows_its_engine(
    cluster: ClusterHandle, custom: Any, profile_name: str
) -> None:
    capabilities = {
        "ingress": {"rendering": {"className": "nginx", "annotations": {"a": "b"}}},
        "certificate.public": {"rendering": {"issuer": "letsencrypt"}},
    }
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterProfile",
        "metadata": {"name": profile_name},
        "spec": {"gitopsEngine": "fluxcd", "capabilities": capabilities, "unknown": True},
    }
    created = custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", body)
    assert created["spec"] == {"gitopsEngine": "fluxcd", "capabilities": capabilities}
    assert ClusterProfile.model_validate(created).to_json() == created

    lines = kubectl(cluster, "get", "oamprofile", profile_name).stdout.splitlines()
    assert lines[0].split() == ["NAME", "ENGINE", "READY", "AGE"]  # READY empty: no status written yet
    assert lines[1].split()[:2] == [profile_name, "fluxcd"]

    with pytest.raises(ApiException) as raised:
        custom.create_cluster_custom_object(
            GROUP, VERSION, "clusterprofiles", {**body, "spec": {"gitopsEngine": "argocd"}}
        )
    assert "spec.gitopsEngine: Unsupported value" in _rejection(raised.value)
