"""``oam-operator status`` and ``reconcile`` against the real control plane (docs/operator.md#the-command-line).

The CRDs from ``crds/`` are applied server-side (idempotent; other tests of the session may have
applied them already) and left installed. Each test creates an Application, writes its status
through the status subresource as the operator does (a JSON merge patch with the operator's field
manager), then runs the installed console script as a user would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tools.devcluster import ClusterHandle, find_binaries
from tools.devcluster.pytest_plugin import default_wait, require_cluster, wait_until

ROOT = Path(__file__).resolve().parents[3]
GROUP, VERSION, PLURAL = "oam-operator.dev", "v1alpha1", "applications"
CRD_NAMES = ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev")
DIGEST = "5f0c" + "0" * 60


def _executable(name: str) -> str:
    beside = Path(sys.executable).parent / name
    path = str(beside) if beside.exists() else shutil.which(name)
    if path is None:
        message = f"{name} not found (install the project into the virtual environment)"
        if require_cluster():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def _established(api: Any, name: str) -> bool:
    crd: Any = client.ApiextensionsV1Api(api).read_custom_resource_definition(name)
    conditions = {c.type: c.status for c in (crd.status.conditions or [])}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


@pytest.fixture
def crds(cluster: ClusterHandle, kube_api: Any) -> None:
    """``kubectl apply --server-side`` of ``crds/`` (what a user does), then wait for Established."""
    found = find_binaries().kubectl
    kubectl = str(found) if found else _executable("kubectl")
    result = subprocess.run(
        [kubectl, "--kubeconfig", cluster.kubeconfig, "apply", "--server-side", "--force-conflicts", "-f",
         str(ROOT / "crds")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for name in CRD_NAMES:
        wait_until(partial(_established, kube_api, name), default_wait(cluster), f"CRD {name} Established")


@pytest.fixture
def custom(kube_api: Any, crds: None) -> Any:
    return client.CustomObjectsApi(kube_api)


def cli(cluster: ClusterHandle, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the installed ``oam-operator`` console script."""
    env = dict(os.environ)
    for key in ("NO_PROXY", "no_proxy"):  # the local API server is never behind a proxy
        env[key] = ",".join(filter(None, [env.get(key), "127.0.0.1", "localhost"]))
    env.pop("OAM_OPERATOR_DOMAIN", None)
    return subprocess.run(
        [_executable("oam-operator"), *args, "--kubeconfig", cluster.kubeconfig],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def item(kind: str, name: str, namespace: str | None, *, group: str = "", apply_order: int = 0,
         delete_order: int = 0, phase: str = "Ready", status: str = "Current", digest: str = DIGEST) -> dict[str, Any]:
    raw: dict[str, Any] = {"group": group, "version": "v1", "kind": kind}
    if namespace:
        raw["namespace"] = namespace
    raw.update({"name": name, "adoptionPolicy": "IfUnowned", "reconcilePolicy": "OnObjectChange",
                "updatePolicy": "SsaMerge", "deletePolicy": "Delete", "applyOrder": apply_order,
                "deleteOrder": delete_order, "digest": digest, "phase": phase, "status": status,
                "lastAppliedAt": "2026-03-01T10:04:05Z"})
    return raw


def conditions(state: str, reason: str, message: str, generation: int) -> list[dict[str, Any]]:
    ready = {"Ready": "True", "Error": "False"}.get(state, "Unknown")
    result: list[dict[str, Any]] = [{"type": "Ready", "status": ready, "reason": reason, "message": message}]
    if state not in ("Ready", "Error"):
        result.append({"type": "Reconciling", "status": "True", "reason": reason, "message": message})
    for entry in result:
        entry.update(observedGeneration=generation, lastTransitionTime="2026-03-01T10:04:05Z")
    return result


def processing_status(ns: str, generation: int) -> dict[str, Any]:
    """The shop example of ``oam-operator status`` (docs/operator.md#the-command-line) in namespace ``ns``,
    plus a cluster-scoped object and one in another namespace."""
    message = "Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)"
    return {
        "observedGeneration": generation,
        "state": "Processing",
        "conditions": conditions("Processing", "Processing", message, generation),
        "objects": 8,
        "readyObjects": 5,
        "bundles": [
            {"name": "shop-00", "dependsOn": [], "objects": 5, "ready": 5, "state": "Ready",
             "waves": {"first": 0, "last": 0}},
            {"name": "shop-01", "dependsOn": ["shop-00"], "objects": 2, "ready": 0, "state": "Applying",
             "waves": {"first": 1, "last": 1}},
        ],
        "inventory": [
            item("Deployment", "web", ns, group="apps", apply_order=1, phase="Creating", status="InProgress"),
            item("Service", "web", ns, apply_order=1, phase="Creating", status="InProgress"),
            item("ConfigMap", "web-legacy", ns, apply_order=1, phase="ScheduledForDeletion", status="Terminating",
                 digest=""),
            item("StatefulSet", "db", ns, group="apps", delete_order=1),
            item("Secret", "db-credentials", ns, delete_order=1),
            item("Service", "db", ns, delete_order=1),
            item("ConfigMap", "shop-ca", "platform", delete_order=1),
            item("PriorityClass", "shop-critical", None, group="scheduling.k8s.io", delete_order=1),
        ],
        "profile": "",
        "revision": 3,
    }


def ready_status(ns: str, generation: int, **extra: Any) -> dict[str, Any]:
    status = processing_status(ns, generation)
    status["inventory"] = [i for i in status["inventory"] if i["digest"]]
    for entry in status["inventory"]:
        entry.update(phase="Ready", status="Current")
    status["bundles"][1].update(ready=2, state="Ready")
    status.update(state="Ready", objects=7, readyObjects=7,
                  conditions=conditions("Ready", "Ready", "Applied revision 3: 7 objects ready", generation), **extra)
    return status


class Apps:
    """Create Applications and write their status as the operator does."""

    def __init__(self, custom: Any, namespace: str) -> None:
        self.custom = custom
        self.namespace = namespace

    def create(self, name: str) -> dict[str, Any]:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": name},
                "spec": {"components": [{"name": "db", "type": "postgresql"}, {"name": "web", "type": "webservice"}]}}
        created: dict[str, Any] = self.custom.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL,
                                                                              body)
        return created

    def write_status(self, name: str, status: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object_status(GROUP, VERSION, self.namespace, PLURAL, name,
                                                          {"status": status}, field_manager=GROUP)

    def get(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.custom.get_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)
        return found


@pytest.fixture
def apps(custom: Any, namespace: str) -> Apps:
    return Apps(custom, namespace)


def test_status_tree_of_a_processing_application(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", processing_status(namespace, generation))
    result = cli(cluster, "status", "shop", "-n", namespace, "--tree")
    assert (result.returncode, result.stderr) == (3, "")
    assert result.stdout == (
        f"Application {namespace}/shop  State: Processing  Ready: Unknown  Revision: 3  Objects: 5/8 ready\n"
        "Message: Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)\n"
        "\n"
        "shop-00   Ready     5/5\n"
        "├── PriorityClass shop-critical           Ready      Current\n"
        "├── Secret db-credentials                 Ready      Current\n"
        "├── ConfigMap platform/shop-ca            Ready      Current\n"
        "├── StatefulSet db                        Ready      Current\n"
        "└── Service db                            Ready      Current\n"
        "shop-01   Applying  0/2   depends on shop-00\n"
        "├── Deployment web                        Creating   InProgress\n"
        "└── Service web                           Creating   InProgress\n"
        "(pruning)\n"
        "└── ConfigMap web-legacy                  ScheduledForDeletion  Terminating\n"
    )
    plain = cli(cluster, "status", "shop", "-n", namespace)
    assert plain.returncode == 3
    assert plain.stdout.splitlines()[3:] == ["shop-00   Ready     5/5", "shop-01   Applying  0/2   depends on shop-00"]


def test_status_json_exits_0_when_ready(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    import json

    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", ready_status(namespace, generation))
    result = cli(cluster, "status", "shop", "-n", namespace, "-o", "json")
    assert (result.returncode, result.stderr) == (0, "")
    document = json.loads(result.stdout)
    assert (document["name"], document["namespace"], document["state"], document["revision"]) == (
        "shop", namespace, "Ready", 3)
    assert [c["type"] for c in document["conditions"]] == ["Ready"]
    assert [(b["name"], b["state"], len(b["items"])) for b in document["bundles"]] == [
        ("shop-00", "Ready", 5), ("shop-01", "Ready", 2)]
    assert {"group": "scheduling.k8s.io", "version": "v1", "kind": "PriorityClass", "namespace": "",
            "name": "shop-critical", "phase": "Ready", "status": "Current"} in document["bundles"][0]["items"]
    assert document["pruning"] == []


def test_a_compact_inventory_reads_like_the_cor_shape(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    """The operator persists status.compactInventory; the tree and ``-o inventory`` show it as before."""
    import json

    from oam_operator.api.compact_inventory import encode

    generation = apps.create("shop")["metadata"]["generation"]
    full = ready_status(namespace, generation)
    apps.write_status("shop", full)
    expected_tree = cli(cluster, "status", "shop", "-n", namespace, "--tree").stdout
    compact = dict(full, compactInventory=encode(full["inventory"]), inventory=None)
    apps.write_status("shop", compact)
    stored = apps.get("shop")["status"]
    assert "inventory" not in stored and stored["compactInventory"]["format"] == 1  # persisted as written
    assert cli(cluster, "status", "shop", "-n", namespace, "--tree").stdout == expected_tree
    result = cli(cluster, "status", "shop", "-n", namespace, "-o", "inventory")
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == full["inventory"]


def test_the_namespace_defaults_to_the_kubeconfig_context(
    cluster: ClusterHandle, apps: Apps, namespace: str, tmp_path: Path
) -> None:
    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", ready_status(namespace, generation))
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for entry in config["contexts"]:
        entry["context"]["namespace"] = namespace
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    result = subprocess.run([_executable("oam-operator"), "status", "shop", "--kubeconfig", str(kubeconfig)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Application {namespace}/shop  State: Ready  Ready: True")


def test_a_missing_application_is_one_exact_error(cluster: ClusterHandle, custom: Any, namespace: str) -> None:
    for command in ("status", "reconcile"):
        result = cli(cluster, command, "nope", "-n", namespace)
        assert (result.returncode, result.stdout, result.stderr) == (
            1, "", f'Error: application "nope" not found in namespace "{namespace}"\n')


def test_reconcile_sets_requested_at(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    apps.create("shop")
    before = datetime.now(UTC) - timedelta(seconds=1)
    result = cli(cluster, "reconcile", "shop", "-n", namespace)
    assert (result.returncode, result.stderr) == (0, "")
    value = apps.get("shop")["metadata"]["annotations"]["oam-operator.dev/requested-at"]
    assert result.stdout == f"Requested a reconcile of Application {namespace}/shop (oam-operator.dev/requested-at: {value})\n"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", value)
    moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before <= moment <= datetime.now(UTC) + timedelta(seconds=1)
    assert apps.get("shop")["metadata"]["generation"] == 1  # an annotation is no spec change

    again = cli(cluster, "reconcile", "shop", "-n", namespace, "--domain", "apps.example.org")
    assert again.returncode == 0
    annotations = apps.get("shop")["metadata"]["annotations"]
    assert annotations["oam-operator.dev/requested-at"] == value
    assert annotations["apps.example.org/requested-at"] > value


@pytest.fixture
def background() -> Iterator[list[threading.Thread]]:
    threads: list[threading.Thread] = []
    yield threads
    for thread in threads:
        thread.join(timeout=60)


def test_wait_returns_0_once_the_operator_reports_ready(
    cluster: ClusterHandle, apps: Apps, namespace: str, background: list[threading.Thread]
) -> None:
    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", processing_status(namespace, generation))
    errors: list[BaseException] = []

    def operator() -> None:
        try:
            time.sleep(2.5)
            apps.write_status("shop", ready_status(namespace, generation))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=operator, daemon=True)
    background.append(thread)
    started = time.monotonic()
    thread.start()
    result = cli(cluster, "status", "shop", "-n", namespace, "--wait", "--timeout", "90s")
    elapsed = time.monotonic() - started
    thread.join(timeout=60)
    assert errors == []
    assert result.returncode == 0
    # Progress on stderr as the state changes (issue 14); stdout is the final status. A slow
    # start of the CLI may miss the Processing state, never the last one.
    processing = ("Processing  5/8 ready  Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), "
                  "Service web (Creating)")
    assert result.stderr.splitlines() in (
        [processing, "Ready  7/7 ready  Applied revision 3: 7 objects ready"],
        ["Ready  7/7 ready  Applied revision 3: 7 objects ready"],
    )
    assert "State: Ready" in result.stdout
    assert elapsed >= 2.5


def test_wait_ignores_a_ready_status_of_an_older_generation_and_times_out_with_3(
    cluster: ClusterHandle, apps: Apps, namespace: str
) -> None:
    apps.create("shop")
    apps.write_status("shop", ready_status(namespace, 0))  # the operator has not seen generation 1 yet
    started = time.monotonic()
    result = cli(cluster, "status", "shop", "-n", namespace, "--wait", "--timeout", "2s")
    assert time.monotonic() - started >= 2
    assert result.returncode == 3
    assert "State: Ready" in result.stdout
    assert result.stderr == (
        "Ready (not yet observed)  7/7 ready  Applied revision 3: 7 objects ready\n"
        f"Timed out after 2s waiting for Application {namespace}/shop to become Ready\n"
    )
    assert cli(cluster, "status", "shop", "-n", namespace).returncode == 0  # without --wait: the state as it is


def test_wait_ends_with_3_on_error(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    generation = apps.create("shop")["metadata"]["generation"]
    status = processing_status(namespace, generation)
    message = 'component "web": unknown component type "websrvice"'
    status.update(state="Error", conditions=conditions("Error", "TransformFailed", message, generation))
    status["conditions"].append({**status["conditions"][0], "type": "Stalled", "status": "True"})
    apps.write_status("shop", status)
    result = cli(cluster, "status", "shop", "-n", namespace, "--wait", "--timeout", "90s")
    assert (result.returncode, result.stderr) == (3, f"Error  5/8 ready  {message}\n")
    assert result.stdout.splitlines()[:2] == [
        f"Application {namespace}/shop  State: Error  Ready: False  Revision: 3  Objects: 5/8 ready",
        f"Message: {message}",
    ]


def test_suspend_and_resume_set_spec_suspend(cluster: ClusterHandle, apps: Apps, namespace: str) -> None:
    apps.create("shop")
    result = cli(cluster, "suspend", "shop", "-n", namespace)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"Application {namespace}/shop suspended\n", "")
    app = apps.get("shop")
    assert (app["spec"]["suspend"], app["metadata"]["generation"]) == (True, 2)
    result = cli(cluster, "resume", "shop", "-n", namespace)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"Application {namespace}/shop resumed\n", "")
    assert apps.get("shop")["spec"]["suspend"] is False
    missing = cli(cluster, "suspend", "nope", "-n", namespace)
    assert (missing.returncode, missing.stderr) == (1, f'Error: application "nope" not found in namespace "{namespace}"\n')


def test_reconcile_wait_refuses_a_suspended_application_at_once(cluster: ClusterHandle, apps: Apps,
                                                                namespace: str) -> None:
    """Issue 44: it waited out its 5-minute timeout and left the request pending until resume."""
    apps.create("shop")
    assert cli(cluster, "suspend", "shop", "-n", namespace).returncode == 0
    started = time.monotonic()
    result = cli(cluster, "reconcile", "shop", "-n", namespace, "--wait")
    assert time.monotonic() - started < 30
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"Error: Application {namespace}/shop is suspended; --wait would wait until it is resumed: resume it "
        f"first (oam-operator resume shop -n {namespace}), or reconcile without --wait to have it handled on resume\n")
    assert "oam-operator.dev/requested-at" not in (apps.get("shop")["metadata"].get("annotations") or {})


def test_reconcile_wait_prints_the_outcome_once_the_request_is_handled(
    cluster: ClusterHandle, apps: Apps, namespace: str, background: list[threading.Thread]
) -> None:
    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", ready_status(namespace, generation))
    errors: list[BaseException] = []

    def operator() -> None:
        """Plays the operator: handles the request it sees with Processing, then Ready."""
        try:
            def requested() -> str | None:
                return (apps.get("shop")["metadata"].get("annotations") or {}).get("oam-operator.dev/requested-at")

            wait_until(lambda: requested() is not None, 60, "the request")
            value = requested()
            apps.write_status("shop", {**processing_status(namespace, generation), "lastHandledReconcileAt": value})
            time.sleep(1.5)
            apps.write_status("shop", {**ready_status(namespace, generation), "lastHandledReconcileAt": value})
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=operator, daemon=True)
    background.append(thread)
    thread.start()
    result = cli(cluster, "reconcile", "shop", "-n", namespace, "--wait", "--timeout", "90s")
    thread.join(timeout=60)
    assert errors == []
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        f"Application {namespace}/shop reconciled: Applied revision 3: 7 objects ready"]
    assert result.stderr.splitlines()[-1] == "Ready  7/7 ready  Applied revision 3: 7 objects ready"
