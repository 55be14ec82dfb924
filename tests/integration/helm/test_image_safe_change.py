"""The safe-change features and notifications as they ship: the image, run with podman the way
the chart's Deployment runs it (docs/image.md), in least-privilege mode, on the full control
plane (Jobs and Deployments progress: kube-controller-manager, scheduler, kwok).

In one container run:

- an Application with a PreApply hook Job and a ``rollback`` policy (docs/operator.md#automatic-rollback,
  docs/operator.md#lifecycle-hooks): revision 1 is Ready after its hook Job completed; revision 2
  (a node selector no node has) is not Ready within its ``timeout`` and is rolled back to
  revision 1 — which needs the chart's rules on ControllerRevisions;
- a Notification (docs/notifications.md) with a webhook provider on a loopback sink, allowed by
  the chart value ``operator.notifications.allowedNetworks``, and an HMAC key: exactly one
  ``failed`` and one ``rolledBack`` message for that episode, signed;
- a second Application under a ``change-window`` deny window open now
  (docs/operator.md#change-windows): ``Waiting``/``ChangeWindowClosed`` and nothing created.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.integration.integrationkit import (
    GROUP,
    VERSION,
    apply_application,
    grant_tenant,
    ready_condition,
    service_account_token,
    start_container_operator,
    wait_state,
)
from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

# The chart's operator listens on the chart's fixed ports on the host network (docs/devcluster.md#parallel-workers).
pytestmark = pytest.mark.exclusive("chart-ports")

DOMAIN = GROUP
KEY = b"shipped-hmac-key-0123456789"
TIMEOUT = "20s"
ROLLBACK = {"name": "undo", "type": "rollback", "properties": {"onFailure": True}}
JOB_RULE = {"apiGroups": ["batch"], "resources": ["jobs"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}


class Sink:
    """A loopback webhook receiver: (headers, body) of every POST, in order."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with sink.lock:
                    sink.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(body) for _, body in self.received]


@pytest.fixture
def sink() -> Iterator[Sink]:
    started = Sink()
    yield started
    started.server.shutdown()
    started.server.server_close()


def hook_job() -> dict[str, Any]:
    """A PreApply Job (delete policy: the default, BeforeNextRun): the restore runs it again."""
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "migrate", "annotations": {f"{DOMAIN}/hook": "PreApply"}},
           "spec": {"backoffLimit": 0, "template": {"spec": {
               "restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.invalid/job:1"}]}}}}
    return {"name": "migrate", "type": "passthrough", "properties": {"object": job}}


def web(node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"app": "web"}
    pod: dict[str, Any] = {"containers": [{"name": "main", "image": "registry.invalid/web:1"}]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels}, "spec": pod}}}
    return {"name": "web", "type": "passthrough", "properties": {"object": deployment}}


def web_spec(node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    return {"serviceAccountName": "deployer", "timeout": TIMEOUT, "policies": [ROLLBACK],
            "components": [hook_job(), web(node_selector)]}


def condition(app: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in app["status"].get("conditions") or [] if c["type"] == kind), {})


def test_rollback_hooks_windows_and_notifications_in_the_image(
    operator_image: str, chart_install: Any, full_cluster: ClusterHandle, full_namespace: str,
    full_kube_api: Any, sink: Sink, tmp_path: Path,
) -> None:
    namespace = full_namespace
    repository, tag = operator_image.rsplit(":", 1)
    release = chart_install({
        "image": {"repository": repository, "tag": tag, "pullPolicy": "Never"},
        "rbac": {"mode": "leastPrivilege"},
        "operator": {"watchNamespaces": [namespace], "defaultInterval": "30s", "logFormat": "json",
                     "notifications": {"allowedNetworks": ["127.0.0.1/32"]}},
    })
    deployment = next(o for o in release.objects if o["kind"] == "Deployment")
    assert "--notification-allowed-networks=127.0.0.1/32" in deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    token = service_account_token(full_kube_api, namespace, release.service_account)
    operator = start_container_operator(release.objects, full_cluster.kubeconfig, token, namespace,
                                        tmp_path / "container")
    core, apps = client.CoreV1Api(full_kube_api), client.AppsV1Api(full_kube_api)
    custom, batch = client.CustomObjectsApi(full_kube_api), client.BatchV1Api(full_kube_api)
    wait = default_wait(full_cluster)
    try:
        grant_tenant(full_kube_api, namespace, "deployer", more_rules=[JOB_RULE])
        core.create_namespaced_secret(namespace, {"metadata": {"name": "hook"},
                                                  "data": {"hmacKey": base64.b64encode(KEY).decode()}})
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "notifications", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "Notification", "metadata": {"name": "ops"},
            "spec": {"applications": ["web"], "events": ["failed", "recovered", "rolledBack"],
                     "provider": {"type": "webhook", "address": sink.url, "secretRef": "hook"}}})

        # A deny window opened at the start of this minute, open for an hour.
        opened = datetime.now(UTC).replace(second=0, microsecond=0)
        schedule = f"{opened.minute} {opened.hour} * * *"
        apply_application(full_kube_api, namespace, "frozen", {
            "serviceAccountName": "deployer",
            "policies": [{"name": "freeze", "type": "change-window", "properties": {
                "windows": [{"kind": "deny", "schedule": schedule, "duration": "1h"}]}}],
            "components": [{"name": "held", "type": "passthrough", "properties": {"object": {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held"}, "data": {"k": "v"}}}}]})
        apply_application(full_kube_api, namespace, "web", web_spec())

        wait_until(operator.healthy, wait, "the container's liveness endpoint")
        ready = wait_state(full_kube_api, full_cluster, namespace, "web", "Ready", "Ready")
        assert [(h["phase"], h["name"], h["run"], h["state"]) for h in ready["status"]["hooks"]] == [
            ("PreApply", "migrate", "r1", "Succeeded")]
        job = batch.read_namespaced_job("migrate", namespace)
        assert any(c.type == "Complete" and c.status == "True" for c in job.status.conditions or [])

        frozen = wait_state(full_kube_api, full_cluster, namespace, "frozen", "Waiting", "ChangeWindowClosed")
        until = (opened + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert ready_condition(frozen)["message"] == (
            f'Change window closed until {until}: deny window "{schedule}" for 1h (UTC) of policy "freeze"')
        assert "held" not in {c.metadata.name for c in core.list_namespaced_config_map(namespace).items}

        apply_application(full_kube_api, namespace, "web", web_spec({"no-such": "node"}))
        rolled = wait_state(full_kube_api, full_cluster, namespace, "web", "Error", "RolledBack")
        message = ready_condition(rolled)["message"]
        # kstatus on the Deployment: the new pod cannot be scheduled, so the old one is kept.
        assert message == (f"Revision 2 failed: Deployment web: Pending termination: 1, not Ready within {TIMEOUT}; "
                           "rolled back to revision 1")
        assert condition(rolled, "RolledBack")["status"] == "True"
        assert rolled["status"]["rolledBack"]["revision"] == 2
        # The restore is applied by the passes after the rollback's verdict, once its PreApply ran
        # again: revision 1's pod template comes back then.
        wait_until(lambda: apps.read_namespaced_deployment("web", namespace).spec.template.spec.node_selector
                   is None, wait, "the Deployment back at revision 1's pod template")

        def revisions() -> dict[int, Any] | None:
            found = apps.list_namespaced_controller_revision(
                namespace, label_selector=f"{DOMAIN}/application-uid={rolled['metadata']['uid']}")
            restores = {item.revision: (item.data or {}).get("restores") for item in found.items}
            return restores if restores.get(3) == 1 else None

        assert wait_until(revisions, wait, "revision 3 recorded restoring 1") == {1: None, 2: None, 3: 1}

        wait_until(lambda: len(sink.bodies()) >= 2, wait, "the failed and rolledBack messages")
        uid = rolled["metadata"]["uid"]
        app_ref = {"namespace": namespace, "name": "web"}
        note_ref = {"namespace": namespace, "name": "ops"}
        bodies = sink.bodies()
        assert [(b["id"], b["event"], b["message"], b["application"], b["notification"]) for b in bodies] == [
            (f"{uid}.failed.1", "failed", f"Application {namespace}/web failed: {message}", app_ref, note_ref),
            (f"{uid}.rolledBack.2", "rolledBack", f"Application {namespace}/web rolled back: {message}",
             app_ref, note_ref),
        ]
        for headers, body in sink.received:
            assert headers["x-oam-signature"] == "sha256=" + hmac.new(KEY, body, hashlib.sha256).hexdigest()
            assert headers["x-oam-event-id"] == json.loads(body)["id"]
            assert body == json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()

        def told() -> dict[str, Any] | None:
            status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "notifications", "ops").get(
                "status") or {}
            return status if status.get("delivered") == 2 else None

        entry = wait_until(told, wait, "the Notification to count both messages delivered")["applications"][0]
        assert (entry["uid"], entry["failing"], entry["episodes"], entry["rolledBack"], entry.get("pending")) == (
            uid, True, 1, 2, None)
        runs = {(h["phase"], h["name"], h["run"], h["state"])
                for h in wait_state(full_kube_api, full_cluster, namespace, "web", "Error", "RolledBack")["status"]["hooks"]}
        assert ("PreApply", "migrate", "r3", "Succeeded") in runs  # the restore ran the migration again

        frozen = wait_state(full_kube_api, full_cluster, namespace, "frozen", "Waiting", "ChangeWindowClosed")
        assert "held" not in {c.metadata.name for c in core.list_namespaced_config_map(namespace).items}
        assert len(sink.received) == 2
        assert operator.running()
    except BaseException:
        print(f"--- operator container log ---\n{operator.log()}")
        raise
    finally:
        operator.stop()
