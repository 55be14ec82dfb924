"""Notifications, exactly once per episode (docs/notifications.md).

The receiver is a thread HTTP server on loopback in the test; the operator may reach it only
because it runs with ``--notification-allowed-networks 127.0.0.1/32``.

- A revision is retried (Pending/Retrying) because a ValidatingWebhookConfiguration of this test,
  scoped to its namespace, cannot be called (the API server answers 500 "failed calling webhook",
  a transient error the operator retries with its fast activity backoff: 50 ms doubling to 1 s).
  Two operator instances with leader election (short lease settings: 6s/4s/1s); the leader is
  SIGKILLed once ``failed`` arrived, the standby takes over; after at least 20 retries in all the
  webhook is removed. The sink holds exactly one ``failed`` and one ``recovered``, both signed with
  the Secret's HMAC key; deleting the Application adds one ``deleted`` and drops its entry.
- A provider at 169.254.169.254 is refused, with the exact Ready condition, and the Application
  it watches is Ready all the same.
- A CloudEvents provider answering 500 is reported (``DeliveryFailed`` with the exact message) and
  retried; once it answers, the event (structured mode) arrives once and the condition says
  ``Delivered``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from e2ekit import DOMAIN, Kube, condition, configmap_component, sleep_briefly
from kubernetes import client

from tools.devcluster.pytest_plugin import wait_until

# Two instances on short leases (6 s/4 s/1 s) and a SIGKILL of the leader: lease renewals are timing that CPU
# load changes (docs/devcluster.md#parallel-workers), as in test_leader_election_e2e.py.
pytestmark = [pytest.mark.cluster, pytest.mark.run_alone]

LEASE = ("--leader-election-lease-duration", "6s", "--leader-election-renew-deadline", "4s",
         "--leader-election-retry-period", "1s")
ALLOW_LOOPBACK = ("--notification-allowed-networks", "127.0.0.1/32")
KEY = b"not-a-real-key-0123456789"


class Sink:
    """What the provider received: (headers, body) per POST, in order."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.refused = 0  # POSTs answered 500 (while ``answer`` is 500)
        self.answer = 204
        self.lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with sink.lock:
                    answer = sink.answer
                    if answer == 204:
                        sink.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    else:
                        sink.refused += 1
                self.send_response(answer)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[str]:
        with self.lock:
            return [json.loads(body)["event"] for _, body in self.received]


@pytest.fixture
def sink() -> Iterator[Sink]:
    started = Sink()
    yield started
    started.server.shutdown()


def create(kube: Kube, plural: str, body: dict[str, Any]) -> None:
    client.CustomObjectsApi(kube.api).create_namespaced_custom_object(DOMAIN, "v1alpha1", kube.namespace, plural,
                                                                      body)


def notification(kube: Kube, name: str, provider: dict[str, Any], events: list[str]) -> None:
    create(kube, "notifications", {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Notification",
                                   "metadata": {"name": name}, "spec": {"events": events, "provider": provider}})


def notification_status(kube: Kube, name: str) -> dict[str, Any]:
    found = client.CustomObjectsApi(kube.api).get_namespaced_custom_object(DOMAIN, "v1alpha1", kube.namespace,
                                                                           "notifications", name)
    return dict(found.get("status") or {})


def broken_webhook(kube: Kube) -> str:
    """A validating webhook for ConfigMaps of this namespace only, at an address nobody serves."""
    name = f"notify-e2e-{kube.namespace}"
    client.AdmissionregistrationV1Api(kube.api).create_validating_webhook_configuration({
        "metadata": {"name": name},
        "webhooks": [{"name": "broken.notify-e2e.example.com", "admissionReviewVersions": ["v1"],
                      "sideEffects": "None", "failurePolicy": "Fail", "timeoutSeconds": 1,
                      "clientConfig": {"url": "https://127.0.0.1:1/validate"},
                      "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": kube.namespace}},
                      "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                 "resources": ["configmaps"]}]}]})
    return name


def apply_passes(*operators: Any) -> float:
    """Apply passes counted by the operators' metrics (each pass of a retried revision is a retry)."""
    total = 0.0
    for operator in operators:
        for (name, labels), value in operator.metrics().items():
            if name == "oam_operator_reconcile_total" and dict(labels).get("branch") == "apply":
                total += value
    return total


def test_one_failed_and_one_recovered_across_retries_and_a_killed_leader(
        start_operator: Any, kube: Kube, sink: Sink) -> None:
    core = client.CoreV1Api(kube.api)
    core.create_namespaced_secret(kube.namespace, {"metadata": {"name": "hook"},
                                                   "data": {"hmacKey": base64.b64encode(KEY).decode()}})
    webhook = broken_webhook(kube)
    try:
        first = start_operator(kube.namespace, *LEASE, *ALLOW_LOOPBACK)
        second = start_operator(kube.namespace, *LEASE, *ALLOW_LOOPBACK)
        notification(kube, "ops", {"type": "webhook", "address": sink.url, "secretRef": "hook"},
                     ["failed", "recovered", "deleted"])
        kube.apply_app("app", {"components": [configmap_component("cfg")]})
        app = kube.wait_state("app", "Pending", "Retrying")
        assert "failed calling webhook" in condition(app, "Ready")["message"]
        wait_until(lambda: sink.events() == ["failed"], 30, "the failed message")

        leader = first if first.leads() else second
        standby = second if leader is first else first
        before_kill = apply_passes(leader)
        leader.kill()
        wait_until(standby.leads, 30, "the standby to lead")
        wait_until(lambda: before_kill + apply_passes(standby) >= 21, 60, "at least 20 retries")
        assert sink.events() == ["failed"]
        assert notification_status(kube, "ops")["applications"][0]["failing"] is True

        client.AdmissionregistrationV1Api(kube.api).delete_validating_webhook_configuration(webhook)
        webhook = ""
        kube.wait_ready("app")
        wait_until(lambda: sink.events() == ["failed", "recovered"], 30, "the recovered message")
        sleep_briefly(3)  # a second message would be sent within the delivery bound (2 s)
        assert sink.events() == ["failed", "recovered"]
    finally:
        if webhook:
            client.AdmissionregistrationV1Api(kube.api).delete_validating_webhook_configuration(webhook)

    uid = kube.app("app")["metadata"]["uid"]
    bodies = [json.loads(body) for _, body in sink.received]
    assert [body["id"] for body in bodies] == [f"{uid}.failed.1", f"{uid}.recovered.1"]
    assert bodies[0]["message"].startswith(f"Application {kube.namespace}/app failed: ")
    assert bodies[1]["message"] == f"Application {kube.namespace}/app recovered: Applied revision 1: 1 objects ready"
    for headers, body in sink.received:
        assert headers["x-oam-signature"] == "sha256=" + hmac.new(KEY, body, hashlib.sha256).hexdigest()
        assert headers["x-oam-event-id"] == json.loads(body)["id"]
    status = notification_status(kube, "ops")
    assert status["delivered"] == 2
    assert status["applications"] == [{"name": "app", "uid": uid, "failing": False, "episodes": 1}]

    client.CustomObjectsApi(kube.api).delete_namespaced_custom_object(DOMAIN, "v1alpha1", kube.namespace,
                                                                      "applications", "app")
    wait_until(lambda: sink.events() == ["failed", "recovered", "deleted"], 30, "the deleted message")
    assert json.loads(sink.received[-1][1])["message"] == f"Application {kube.namespace}/app was deleted"
    wait_until(lambda: "applications" not in notification_status(kube, "ops"), 10, "the entry dropped")
    assert sink.events() == ["failed", "recovered", "deleted"]


def test_a_provider_at_the_metadata_address_is_refused_and_the_application_is_untouched(
        start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace, *ALLOW_LOOPBACK)
    notification(kube, "meta", {"type": "slack", "address": "http://169.254.169.254/hook"}, ["failed"])
    kube.apply_app("app", {"components": [configmap_component("cfg")]})

    def refused() -> dict[str, Any] | None:
        ready = next((c for c in notification_status(kube, "meta").get("conditions") or []
                      if c["type"] == "Ready"), None)
        return ready if ready is not None and ready["status"] == "False" else None

    ready = wait_until(refused, 30, "the refusal")
    assert ready["reason"] == "AddressRefused"
    assert ready["message"] == (
        'posting to "http://169.254.169.254/hook": refused to connect to 169.254.169.254: a link-local address '
        "(notifications may reach only public addresses); the operator allows internal networks listed in "
        "--notification-allowed-networks")
    kube.wait_ready("app")  # a Notification that cannot send changes nothing of what it watches


def test_a_failing_provider_is_retried_and_reported_and_the_message_arrives_once(
        start_operator: Any, kube: Kube, sink: Sink) -> None:
    sink.answer = 500
    start_operator(kube.namespace, *ALLOW_LOOPBACK)
    notification(kube, "flaky", {"type": "cloudevents", "address": sink.url}, ["failed"])
    kube.apply_app("bad", {"components": [{"name": "x", "type": "no-such-type", "properties": {}}]})
    kube.wait_state("bad", "Error", "TransformFailed")

    def reported() -> dict[str, Any] | None:
        ready = next((c for c in notification_status(kube, "flaky").get("conditions") or []
                      if c["type"] == "Ready"), None)
        return ready if ready is not None and ready["reason"] == "DeliveryFailed" else None

    ready = wait_until(reported, 30, "the failed delivery in the status")
    assert (ready["status"], ready["message"]) == ("False", f"posting to '{sink.url}': unexpected status 500")
    assert notification_status(kube, "flaky")["applications"][0]["pending"][0]["event"] == "failed"
    wait_until(lambda: sink.refused >= 2, 30, "a retry")
    sink.answer = 204
    told = f"Application {kube.namespace}/bad failed: component \"x\": no definition for component type \"no-such-type\""

    def texts() -> list[str]:
        with sink.lock:
            return [json.loads(body)["data"]["message"] for _, body in sink.received]

    wait_until(lambda: len(texts()) == 1, 60, "the delivery once the provider answers")
    assert texts()[0].startswith(told)
    headers, body = sink.received[0]
    assert headers["content-type"] == "application/cloudevents+json"
    event = json.loads(body)
    uid = kube.app("bad")["metadata"]["uid"]
    assert (event["specversion"], event["type"], event["id"], event["subject"]) == (
        "1.0", "dev.oam-operator.application.failed", f"{uid}.failed.1", "bad")
    assert event["source"] == f"/apis/oam-operator.dev/v1alpha1/namespaces/{kube.namespace}/applications/bad"
    # The receiver has the message before the operator has its answer and writes the status.
    status = wait_until(lambda: (lambda s: s if "pending" not in s["applications"][0] else None)(
        notification_status(kube, "flaky")), 30, "the delivered message off the pending list")
    assert [(c["status"], c["reason"]) for c in status["conditions"]] == [("True", "Delivered")]
    sleep_briefly(3)  # a second message would be sent within the delivery bound (2 s)
    assert len(texts()) == 1
