"""The validating admission webhook end to end (docs/admission.md).

The operator runs on the host serving ``/validate-applications`` on 127.0.0.1 with its
self-signed certificate; the ValidatingWebhookConfiguration is the chart's, rendered in url mode
(the local control plane cannot reach in-cluster Services) and confined to the test's namespace.
``kubectl apply`` of a refused Application fails with the transform's exact message; the
operator keeps writing the same message into the status of an Application stored while the
webhook was off, and that one can still be relabelled and deleted.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import GROUP, VERSION, Kube, condition
from kubernetes import client
from kubernetes.client.rest import ApiException

from tools.devcluster import find_binaries
from tools.devcluster.helm import render, require_helm
from tools.devcluster.pytest_plugin import default_wait, wait_until
from tools.operatorprocess import free_port

WEBHOOK = "validate.applications.oam-operator.dev"
TYPO_MESSAGE = ('component "web": unknown type "webservise" (valid: crd, cronjob, daemonset, helm, helmchart, '
                'manifests, oci, passthrough, postgresql, statefulset, webservice, worker); did you mean "webservice"?')
NO_TAG_MESSAGE = ('component "web": image "nginx" rejected: no tag or digest specified; use an explicit version '
                  "tag or digest")


def _app(name: str, namespace: str, *components: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"components": list(components)}}


def _config_map(name: str) -> dict[str, Any]:
    return {"name": "cm", "type": "passthrough",
            "properties": {"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}}}


TYPO = {"name": "web", "type": "webservise", "properties": {"image": "nginx:1.27"}}
NO_TAG = {"name": "web", "type": "webservice", "properties": {"image": "nginx"}}
URL = {"name": "remote", "type": "manifests", "properties": {"url": "https://127.0.0.1:1/objects.yaml"}}


class Chart:
    """The chart's admission objects and flags for one test namespace (url mode on ``port``)."""

    def __init__(self, namespace: str, port: int, home: Path) -> None:
        self.release = f"adm-{secrets.token_hex(3)}"
        values = {"admission": {"enabled": True, "url": f"https://127.0.0.1:{port}", "port": port},
                  "operator": {"watchNamespaces": [namespace]}}
        objects = render(require_helm(), home, values=values, release=self.release, namespace=namespace)
        self.configuration = next(o for o in objects if o["kind"] == "ValidatingWebhookConfiguration")
        deployment = next(o for o in objects if o["kind"] == "Deployment")
        argv = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        self.flags = [arg for arg in argv if arg.startswith("--admission")]
        self.name = self.configuration["metadata"]["name"]
        secret = next(f for f in self.flags if f.startswith("--admission-secret="))
        self.secret = secret.split("=", 1)[1].split("/", 1)[1]


@pytest.fixture
def chart(kube: Kube, tmp_path: Path) -> Iterator[Chart]:
    rendered = Chart(kube.namespace, free_port(), tmp_path / "helm")
    yield rendered
    try:
        client.AdmissionregistrationV1Api(kube.api).delete_validating_webhook_configuration(rendered.name)
    except ApiException as error:
        if error.status != 404:
            raise


def _kubectl(kube: Kube, *args: str, stdin: str | None = None, cwd: Path | None = None
             ) -> subprocess.CompletedProcess[str]:
    command = [str(find_binaries().kubectl), "--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace, *args]
    return subprocess.run(command, capture_output=True, text=True, input=stdin, cwd=cwd, timeout=120, check=False)


def _ca_bundle(kube: Kube, name: str) -> str | None:
    configuration = client.AdmissionregistrationV1Api(kube.api).read_validating_webhook_configuration(name)
    bundle: str | None = configuration.webhooks[0].client_config.ca_bundle
    return bundle


def _refused_by_webhook(kube: Kube, body: dict[str, Any]) -> str | None:
    """The webhook's denial of a server-side dry-run create, ``None`` while the API server admits it."""
    try:
        kube.custom.create_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", body,
                                                    dry_run="All")
    except ApiException as error:
        if error.status == 422 and WEBHOOK in (error.body or ""):
            return str(json.loads(error.body)["message"])
        if error.status != 500:  # 500: the API server's view of the configuration still lacks the CA
            raise
    return None


def test_kubectl_apply_is_refused_with_the_transforms_message(start_operator: Any, kube: Kube, chart: Chart,
                                                              tmp_path: Path) -> None:
    operator = start_operator(kube.namespace, "--admission-address=127.0.0.1", *chart.flags)
    # Stored while no webhook is configured: the operator refuses it in status, as before.
    kube.apply_app("stored-bad", {"components": [TYPO]})
    stored = kube.wait_state("stored-bad", "Error", "TransformFailed")
    assert condition(stored, "Ready")["message"] == TYPO_MESSAGE

    client.AdmissionregistrationV1Api(kube.api).create_validating_webhook_configuration(chart.configuration)
    secret = wait_until(lambda: kube.core.read_namespaced_secret(chart.secret, kube.namespace), default_wait(
        kube.cluster), "the webhook's Secret")
    assert secret.type == "kubernetes.io/tls"
    wait_until(lambda: _ca_bundle(kube, chart.name) == secret.data["ca.crt"], default_wait(kube.cluster),
               "the operator to put its CA into the webhook configuration")
    wait_until(lambda: _refused_by_webhook(kube, _app("probe", kube.namespace, TYPO)), default_wait(kube.cluster),
               "the API server to call the webhook")

    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(_app("bad", kube.namespace, TYPO)))
    created = _kubectl(kube, "apply", "-f", "bad.yaml", cwd=tmp_path)
    assert (created.returncode, created.stdout) == (1, "")
    assert created.stderr == (f'Error from server: error when creating "bad.yaml": admission webhook "{WEBHOOK}" '
                              f"denied the request: {TYPO_MESSAGE}\n")
    assert kube.app_or_none("bad") is None
    refusals = [line for line in operator.logs() if line.get("msg") == "admission refused"]
    assert {"level": "info", "namespace": kube.namespace, "name": "bad", "operation": "CREATE", "dry_run": False,
            "reason": TYPO_MESSAGE}.items() <= refusals[-1].items()
    assert not any("failed permanently" in str(line.get("msg")) for line in operator.logs())

    # A valid one is admitted; changing it into a refused one is not, and the stored spec stays.
    good = _app("good", kube.namespace, _config_map("settings"))
    (tmp_path / "good.yaml").write_text(yaml.safe_dump(good))
    assert _kubectl(kube, "apply", "-f", "good.yaml", cwd=tmp_path).returncode == 0
    kube.wait_ready("good")
    good["spec"]["components"].append(NO_TAG)
    changed = _kubectl(kube, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(good))
    assert changed.returncode == 1
    assert changed.stderr == (f'Error from server: admission webhook "{WEBHOOK}" denied the request: '
                              f"{NO_TAG_MESSAGE}\n")
    assert len(kube.app("good")["spec"]["components"]) == 1

    # Larger than etcd stores (docs/operator.md#the-size-the-api-server-accepts): refused, naming size
    # and limit, before etcd could answer only `etcdserver: request is too large`.
    big = _app("big", kube.namespace, _config_map("big"))
    big["spec"]["components"][0]["properties"]["object"]["data"] = {"blob": "x" * 1_600_000}
    sent = len(json.dumps(big, separators=(",", ":")).encode())
    too_big = _kubectl(kube, "apply", "--server-side", "-f", "-", stdin=json.dumps(big))
    assert too_big.returncode == 1
    found = re.fullmatch(
        f'Error from server: admission webhook "{re.escape(WEBHOOK)}" denied the request: The Application is '
        r"(\d+) bytes as JSON; the API server stores at most 1572864 bytes in one object \(etcd's request limit, "
        r"1\.5 MiB\) and refuses it: split it into several Applications, or read its manifests from a URL source\n",
        too_big.stderr)
    assert found is not None, too_big.stderr
    assert sent <= int(found.group(1)) <= sent + 4096  # what it sent, and the server's metadata
    assert kube.app_or_none("big") is None
    # An UPDATE's review carries the old object and the new one: 2 × 0.9 MB is read, and admitted.
    medium = _app("medium", kube.namespace, _config_map("medium"))
    medium["spec"]["components"][0]["properties"]["object"]["data"] = {"blob": "y" * 900_000}
    assert _kubectl(kube, "apply", "--server-side", "-f", "-", stdin=json.dumps(medium)).returncode == 0
    medium["spec"]["components"][0]["properties"]["object"]["data"] = {"blob": "z" * 900_000}
    updated = _kubectl(kube, "apply", "--server-side", "-f", "-", stdin=json.dumps(medium))
    assert (updated.returncode, updated.stderr) == (0, "")

    # Remote content is not fetched by admission: admitted, and refused in status by the operator.
    (tmp_path / "remote.yaml").write_text(yaml.safe_dump(_app("remote", kube.namespace, URL)))
    assert _kubectl(kube, "apply", "-f", "remote.yaml", cwd=tmp_path).returncode == 0
    remote = kube.wait_state("remote", "Error", "TransformFailed")
    assert condition(remote, "Ready")["message"].startswith('manifests component "remote": manifest source: ')

    # The stored invalid Application can still be labelled (spec unchanged) and deleted (finalizer removal).
    assert _kubectl(kube, "label", "application/stored-bad", "team=a").returncode == 0
    deleted = _kubectl(kube, "delete", "application/stored-bad", "--wait=true", "--timeout=120s")
    assert deleted.returncode == 0, deleted.stderr
    assert kube.app_or_none("stored-bad") is None

    # A restart reuses the stored certificate: no new Secret version, and the webhook still answers.
    version = kube.core.read_namespaced_secret(chart.secret, kube.namespace).metadata.resource_version
    operator.stop()
    start_operator(kube.namespace, "--admission-address=127.0.0.1", *chart.flags)
    assert kube.core.read_namespaced_secret(chart.secret, kube.namespace).metadata.resource_version == version
    assert base64.b64decode(_ca_bundle(kube, chart.name) or "") == base64.b64decode(secret.data["ca.crt"])
    again = _kubectl(kube, "apply", "-f", "bad.yaml", cwd=tmp_path)
    assert again.stderr.endswith(f"denied the request: {TYPO_MESSAGE}\n")


def test_certificate_files_from_a_directory_are_served_as_given(start_operator: Any, kube: Kube, chart: Chart,
                                                                tmp_path: Path) -> None:
    """cert-manager's mode (``--admission-cert-dir``): the operator serves the mounted pair, issues nothing."""
    from datetime import UTC, datetime

    from oam_operator.controller.service.webhookcerts import issue

    certs = issue(["127.0.0.1"], datetime.now(UTC))
    directory = tmp_path / "webhook-tls"
    directory.mkdir()
    (directory / "tls.crt").write_bytes(certs.cert)
    (directory / "tls.key").write_bytes(certs.key)
    port = next(f for f in chart.flags if f.startswith("--admission-port=")).split("=", 1)[1]
    start_operator(kube.namespace, "--admission", f"--admission-port={port}", "--admission-address=127.0.0.1",
                   f"--admission-cert-dir={directory}")
    configuration = chart.configuration
    configuration["webhooks"][0]["clientConfig"]["caBundle"] = base64.b64encode(certs.ca).decode()
    client.AdmissionregistrationV1Api(kube.api).create_validating_webhook_configuration(configuration)
    denial = wait_until(lambda: _refused_by_webhook(kube, _app("probe", kube.namespace, NO_TAG)),
                        default_wait(kube.cluster), "the API server to call the webhook")
    assert denial == f'admission webhook "{WEBHOOK}" denied the request: {NO_TAG_MESSAGE}'
    with pytest.raises(ApiException):
        kube.core.read_namespaced_secret(chart.secret, kube.namespace)  # nothing issued in this mode


def test_a_shard_instance_validates_every_application(start_operator: Any, kube: Kube, chart: Chart) -> None:
    """The webhook is per release, not per shard: an instance running --shard refuses unlabelled ones too."""
    start_operator(kube.namespace, "--shard=eu", "--admission-address=127.0.0.1", *chart.flags)
    client.AdmissionregistrationV1Api(kube.api).create_validating_webhook_configuration(chart.configuration)
    body = _app("unsharded", kube.namespace, TYPO)
    denial = wait_until(lambda: _refused_by_webhook(kube, body), default_wait(kube.cluster),
                        "the API server to call the shard's webhook")
    assert denial == f'admission webhook "{WEBHOOK}" denied the request: {TYPO_MESSAGE}'
    body["metadata"]["labels"] = {"oam-operator.dev/shard": "us"}
    assert _refused_by_webhook(kube, body) == denial
