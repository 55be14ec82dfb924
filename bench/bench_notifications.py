"""Delivery delay of notifications (docs/notifications.md#measured): from an Application's state
change to the receiver's arrival of the message, over ``--episodes`` failure episodes.

One ``oam-operator run`` host process (leader election on, as deployed) on a fresh minimal control
plane, one Application of one ConfigMap, one Notification (``webhook``, HMAC) to a thread HTTP
receiver on 127.0.0.1 (allowed with ``--notification-allowed-networks``). Each episode: a
ValidatingWebhookConfiguration that cannot be called is created for the namespace and the
ConfigMap's data changed, so the revision is retried (``Pending``/``Retrying``: ``failed``); the
configuration is deleted, the revision lands (``Ready``: ``recovered``). The state change's time
is when this process's own watch of the Application sees it; the delay is the message's arrival
minus that (both ``time.monotonic`` in this process). Prints percentiles; asserts nothing; the
target is p99 ≤ 2 s.

Usage: ``python bench/bench_notifications.py [--episodes 50] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import client, watch  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.devcluster.pytest_plugin import api_client, wait_until  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

NAMESPACE = "notify-bench"
DOMAIN = "oam-operator.dev"
WEBHOOK = "notify-bench-broken"


class Receiver:
    """The provider: arrival time per message event, in order."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[str, float]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.arrivals.append((json.loads(body)["event"], time.monotonic()))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class StateWatch:
    """This process's watch of the Application: when each state was first seen."""

    def __init__(self, api: Any) -> None:
        self.changes: list[tuple[str, float]] = []
        self.api = api
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        last = ""
        objects = client.CustomObjectsApi(self.api)
        for event in watch.Watch().stream(objects.list_namespaced_custom_object, DOMAIN, "v1alpha1", NAMESPACE,
                                          "applications", timeout_seconds=3600):
            state = str((event["object"].get("status") or {}).get("state") or "")
            if state != last:
                self.changes.append((state, time.monotonic()))
                last = state


def broken_webhook(api: Any) -> None:
    client.AdmissionregistrationV1Api(api).create_validating_webhook_configuration({
        "metadata": {"name": WEBHOOK},
        "webhooks": [{"name": "broken.notify-bench.example.com", "admissionReviewVersions": ["v1"],
                      "sideEffects": "None", "failurePolicy": "Fail", "timeoutSeconds": 1,
                      "clientConfig": {"url": "https://127.0.0.1:1/validate"},
                      "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
                      "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                 "resources": ["configmaps"]}]}]})


def application(version: int) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"v": str(version)}}
    return {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application", "metadata": {"name": "app"},
            "spec": {"components": [{"name": "cfg", "type": "passthrough", "properties": {"object": obj}}]}}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-notify-"))
    plane = dc.start("minimal", run_dir=work / "plane")
    api = api_client(plane.handle)
    receiver = Receiver()
    operator = None
    try:
        extensions = client.ApiextensionsV1Api(api)
        import yaml

        for path in sorted((ROOT / "crds").glob("*.yaml")):
            extensions.create_custom_resource_definition(yaml.safe_load(path.read_text()))
        wait_until(lambda: all(any(c.type == "Established" and c.status == "True"
                                   for c in (extensions.read_custom_resource_definition(n).status.conditions or []))
                               for n in ("applications.oam-operator.dev", "notifications.oam-operator.dev")),
                   60, "the CRDs")
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": NAMESPACE}})
        core.create_namespaced_secret(NAMESPACE, {"metadata": {"name": "hook"},
                                                  "data": {"hmacKey": base64.b64encode(b"bench").decode()}})
        objects = client.CustomObjectsApi(api)
        objects.create_namespaced_custom_object(DOMAIN, "v1alpha1", NAMESPACE, "notifications", {
            "apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Notification", "metadata": {"name": "bench"},
            "spec": {"events": ["failed", "recovered"],
                     "provider": {"type": "webhook", "address": receiver.url, "secretRef": "hook"}}})
        operator = OperatorProcess.start(work / "operator.log", kubeconfig=plane.handle.kubeconfig,
                                         namespaces=[NAMESPACE], operator_namespace=NAMESPACE, name="bench",
                                         extra=["--use-operator-identity", "--default-profile", "",
                                                "--notification-allowed-networks", "127.0.0.1/32"])
        operator.wait_serving(60)
        states = StateWatch(api)
        objects.create_namespaced_custom_object(DOMAIN, "v1alpha1", NAMESPACE, "applications", application(0))
        wait_until(lambda: states.changes and states.changes[-1][0] == "Ready", 60, "the Application Ready")
        admission = client.AdmissionregistrationV1Api(api)
        for episode in range(1, args.episodes + 1):
            broken_webhook(api)
            objects.patch_namespaced_custom_object(DOMAIN, "v1alpha1", NAMESPACE, "applications", "app",
                                                   application(episode))
            wait_until(lambda n=episode: len(receiver.arrivals) >= 2 * n - 1, 60, f"failed #{episode}")
            admission.delete_validating_webhook_configuration(WEBHOOK)
            wait_until(lambda n=episode: len(receiver.arrivals) >= 2 * n, 60, f"recovered #{episode}")
        time.sleep(3)  # nothing more should arrive
    finally:
        if operator is not None:
            operator.stop()
        api.close()
        plane.stop()
    # Pair each message with the state change it tells of: the first failing state after the last
    # Ready for failed, the first Ready after it for recovered.
    delays: list[float] = []
    first_ready = next(i for i, (state, _) in enumerate(states.changes) if state == "Ready")
    changes = iter(states.changes[first_ready + 1:])  # the creation is no episode
    for event, arrived in receiver.arrivals:
        wanted = ("Pending",) if event == "failed" else ("Ready",)
        seen = next(at for state, at in changes if state in wanted)
        delays.append(arrived - seen)
    events = [event for event, _ in receiver.arrivals]
    result = {"episodes": args.episodes, "messages": len(events),
              "failed": events.count("failed"), "recovered": events.count("recovered"),
              "delay_seconds": {"p50": percentile(delays, 0.5), "p90": percentile(delays, 0.9),
                                "p99": percentile(delays, 0.99), "max": max(delays),
                                "mean": statistics.fmean(delays)}}
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
