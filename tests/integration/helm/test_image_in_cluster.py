"""The operator as it ships: its image, run with podman the way the chart's Deployment runs it
(docs/image.md), in-cluster mode, as the chart's ServiceAccount in least-privilege mode.

An Application with a URL-sourced ``manifests`` component and a ``delivery: template`` helm
chart, both served from a local HTTP server on 127.0.0.1 (allowed by the chart value
``operator.urlSources.allowedNetworks``), reaches Ready and deletes cleanly; a URL source on an
address outside the allowed networks is refused with the guard's exact message. Liveness and
metrics answer from inside the container. The chart's admission webhook (url mode: the local
control plane cannot reach Services) is served by the container with its self-signed
certificate, and an Application the transform refuses is refused by the API server with the
transform's exact message. The image comes from ``make image`` (``make test``
builds it first); a missing image fails the test when the cluster is required.
"""

from __future__ import annotations

import http.server
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.integration.integrationkit import (
    apply_application,
    delete_application,
    grant_tenant,
    ready_condition,
    service_account_token,
    start_container_operator,
    wait_state,
)
from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until
from tools.operatorprocess import free_port

# The chart fixes the operator's health and metrics ports: these modules never run at once.
pytestmark = pytest.mark.exclusive("chart-ports")

OBJECTS_YAML = b"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-url
data:
  source: url
"""
CHART_FILES = {
    "demo/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "demo/values.yaml": "greeting: hello\n",
    "demo/templates/configmap.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-demo\n"
        "data:\n  greeting: {{ .Values.greeting | quote }}\n"
    ),
}


def chart_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in CHART_FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def served() -> Iterator[tuple[str, list[str]]]:
    """A local server: ``/objects.yaml`` and the chart at ``/charts/demo``; yields (base URL, paths asked)."""
    files = {"/objects.yaml": OBJECTS_YAML, "/charts/demo": chart_archive()}
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


WEBHOOK = "validate.applications.oam-operator.dev"
TYPO_MESSAGE = ('component "web": unknown type "webservise" (valid: crd, cronjob, daemonset, helm, helmchart, '
                'manifests, oci, passthrough, postgresql, statefulset, webservice, worker); did you mean "webservice"?')


def refused_at_admission(api: Any, cluster: ClusterHandle, namespace: str, objects: list[dict[str, Any]]) -> None:
    """The container's webhook refuses an Application the transform refuses, with its exact message."""
    configuration = next(o for o in objects if o["kind"] == "ValidatingWebhookConfiguration")
    admission = client.AdmissionregistrationV1Api(api)
    name = configuration["metadata"]["name"]
    wait_until(lambda: admission.read_validating_webhook_configuration(name).webhooks[0].client_config.ca_bundle,
               default_wait(cluster), "the operator to put its CA into the webhook configuration")
    body = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "refused", "namespace": namespace},
            "spec": {"serviceAccountName": "deployer",
                     "components": [{"name": "web", "type": "webservise", "properties": {"image": "nginx:1.27"}}]}}
    custom = client.CustomObjectsApi(api)

    def denial() -> str | None:
        try:
            custom.create_namespaced_custom_object("oam-operator.dev", "v1alpha1", namespace, "applications", body,
                                                   dry_run="All")
        except ApiException as error:
            message = str(json.loads(error.body or "{}").get("message", ""))
            if WEBHOOK in message:
                return message
            if error.status not in (500, 503):  # not yet reachable: the API server reports the call's failure
                raise
        else:
            raise AssertionError("a refused Application was admitted")
        return None

    message = wait_until(denial, default_wait(cluster), "the API server to call the container's webhook")
    assert message == f'admission webhook "{WEBHOOK}" denied the request: {TYPO_MESSAGE}'


def test_the_image_runs_in_cluster_as_the_chart_configures_it(
    operator_image: str, chart_install: Any, full_cluster: ClusterHandle, full_namespace: str,
    full_kube_api: Any, served: tuple[str, list[str]], tmp_path: Path,
) -> None:
    base, asked = served
    repository, tag = operator_image.rsplit(":", 1)
    webhook_port = free_port()
    release = chart_install({
        "image": {"repository": repository, "tag": tag, "pullPolicy": "Never"},
        "rbac": {"mode": "leastPrivilege"},
        "admission": {"enabled": True, "url": f"https://127.0.0.1:{webhook_port}", "port": webhook_port},
        "operator": {"watchNamespaces": [full_namespace], "defaultInterval": "30s", "logFormat": "json",
                     "urlSources": {"allowedNetworks": ["127.0.0.1/32"]}},
    })
    token = service_account_token(full_kube_api, full_namespace, release.service_account)
    operator = start_container_operator(release.objects, full_cluster.kubeconfig, token, full_namespace,
                                        tmp_path / "container")
    try:
        wait_until(operator.healthy, default_wait(full_cluster), "the container's liveness endpoint")
        metrics = operator.exec_get(operator.metrics_port, "/metrics")
        assert metrics.startswith("200\n") and 'oam_operator_build_info{version="0.1.0"} 1.0' in metrics

        refused_at_admission(full_kube_api, full_cluster, full_namespace, release.objects)
        grant_tenant(full_kube_api, full_namespace, "deployer")
        apply_application(full_kube_api, full_namespace, "shipped", {
            "serviceAccountName": "deployer",
            "components": [
                {"name": "remote", "type": "manifests", "properties": {"url": f"{base}/objects.yaml"}},
                {"name": "chart", "type": "helm", "properties": {
                    "source": {"url": f"{base}/charts"}, "chart": "demo", "version": "0.1.0",
                    "delivery": "template", "values": {"greeting": "from the image"}}},
            ],
        })
        internal = "http://127.0.0.2:9/objects.yaml"
        apply_application(full_kube_api, full_namespace, "internal", {
            "serviceAccountName": "deployer",
            "components": [{"name": "remote", "type": "manifests", "properties": {"url": internal}}],
        })

        app = wait_state(full_kube_api, full_cluster, full_namespace, "shipped", "Ready", "Ready")
        assert app["status"]["objects"] == app["status"]["readyObjects"] == 2
        core = client.CoreV1Api(full_kube_api)
        assert core.read_namespaced_config_map("from-url", full_namespace).data == {"source": "url"}
        assert core.read_namespaced_config_map("release-demo", full_namespace).data == {"greeting": "from the image"}
        assert {"/objects.yaml", "/charts/demo"} <= set(asked)  # fetched by the operator in the container

        refused = wait_state(full_kube_api, full_cluster, full_namespace, "internal", "Error")
        assert ready_condition(refused)["message"] == (
            f'manifests component "remote": manifest source: reading "{internal}": refused to connect to '
            "127.0.0.2: a loopback address (URL sources may reach only public addresses); the operator allows "
            "internal networks listed in --url-source-allowed-networks"
        )

        delete_application(full_kube_api, full_cluster, full_namespace, "internal")
        delete_application(full_kube_api, full_cluster, full_namespace, "shipped")
        names = {c.metadata.name for c in core.list_namespaced_config_map(full_namespace).items}
        assert not {"from-url", "release-demo"} & names
        assert operator.running()
        assert any(line.startswith("{\"ts\"") and "\"level\"" in line for line in operator.log().splitlines())
    except BaseException:
        print(f"--- operator container log ---\n{operator.log()}")
        raise
    finally:
        operator.stop()
