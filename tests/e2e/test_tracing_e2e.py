"""Traces and ``explain`` on the local control plane (issue 42 items 4-6; docs/operator.md#tracing,
docs/operator.md#explain).

An OTLP/HTTP sink on loopback decodes what the operator exports with ``opentelemetry-proto``. kwok
makes the db StatefulSet's Pod Ready 8 s after it is scheduled and the web Deployment's 2 s after
(the ``pod-ready.stage.kwok.x-k8s.io/delay`` annotation, docs/devcluster.md#kwok-stages); web
depends on db. ``explain`` prints db then web with those times (±1 s of what the test saw the
cluster take: kwok's delays plus the machine's load); the sink receives one trace
for the revision, whose root lasts the time-to-Ready the test measured (±0.5 s) and has one child
per wave. A second revision (web's image) is a second trace. Ten reconcile requests on the Ready
Application are passes that re-apply its objects and send no span.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from e2ekit import DOMAIN, Kube, OperatorProcess, dependency
from kubernetes.client.exceptions import ApiException
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.reconciler.status import DefaultStatusAnalyzer
from tools.devcluster import ClusterHandle
from tools.devcluster.devcluster import POD_READY_DELAY_ANNOTATION
from tools.devcluster.pytest_plugin import default_wait, wait_until

# explain is checked within 1 s of the readiness the test itself saw: CPU load delays the operator's view
# (docs/devcluster.md#parallel-workers).
pytestmark = pytest.mark.run_alone

ANALYZER = DefaultStatusAnalyzer(DOMAIN)


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int

    @property
    def seconds(self) -> float:
        return (self.end - self.start) / 1e9


class OtlpSink:
    """An OTLP/HTTP receiver on 127.0.0.1: every span of every ``POST /v1/traces``, decoded."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
                received = [Span(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name,
                                 s.start_time_unix_nano, s.end_time_unix_nano)
                            for resource in request.resource_spans for scope in resource.scope_spans
                            for s in scope.spans]
                with sink.lock:
                    sink.spans.extend(received)
                body = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def received(self) -> list[Span]:
        with self.lock:
            return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    receiver = OtlpSink()
    yield receiver
    receiver.close()


@pytest.fixture
def traced_operator(full_cluster: ClusterHandle, crds_installed: None, tmp_path: Path, sink: OtlpSink,
                    full_namespace: str) -> Iterator[OperatorProcess]:
    """The operator of the test's namespace, exporting to the sink (as conftest's ``start_operator``)."""
    operator = OperatorProcess.start(
        tmp_path / "operator.log", kubeconfig=full_cluster.kubeconfig, namespaces=[full_namespace],
        operator_namespace=full_namespace, extra=["--default-interval", "30s", "--use-operator-identity"],
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100",
             "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    try:
        operator.wait_serving(default_wait(full_cluster))
        # Leading before the Application exists: the time-to-Ready the test measures is the operator's.
        wait_until(lambda: operator.leader_gauge() == 1, default_wait(full_cluster), "the operator to lead")
        yield operator
    finally:
        operator.stop()
        sys.stderr.write(f"\n--- operator log tail ---\n{operator.log_path.read_text()[-3000:]}\n")


def workload(kind: str, name: str, delay: str, image: str = "registry.invalid/app:1") -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {
        "replicas": 1, "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels, "annotations": {POD_READY_DELAY_ANNOTATION: delay}},
                     "spec": {"containers": [{"name": "main", "image": image}]}}}
    if kind == "StatefulSet":
        spec["serviceName"] = name
    obj = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}
    return {"name": name, "type": "passthrough", "properties": {"object": obj}}


def spec(web_image: str) -> dict[str, Any]:
    return {"components": [workload("StatefulSet", "db", "8s"), workload("Deployment", "web", "2s", web_image)],
            "policies": [dependency(("web", ["db"]))]}


def explain(kube: Kube, name: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), "explain", name, "-n", kube.namespace,
                           "--kubeconfig", kube.cluster.kubeconfig],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


class Readiness:
    """When the test itself saw db exist and db and web become Ready (polled every 0.05 s in a
    thread, judged by the reconciler's own kstatus rules): the reference for explain's figures, whatever the machine's load adds to
    kwok's delays."""

    def __init__(self, kube: Kube) -> None:
        self.kube, self.done = kube, threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.seen: dict[str, float] = {}
        self.thread.start()

    def poll(self) -> None:
        ns, apps = self.kube.namespace, self.kube.apps
        while not self.done.is_set() and len(self.seen) < 3:
            now = time.monotonic()
            try:
                db = apps.read_namespaced_stateful_set("db", ns)
                self.seen.setdefault("db created", now)
                if self.current(db):
                    self.seen.setdefault("db ready", now)
                if self.current(apps.read_namespaced_deployment("web", ns)):
                    self.seen.setdefault("web ready", now)
            except ApiException:
                pass
            time.sleep(0.05)

    def current(self, obj: Any) -> bool:
        """Ready as the operator's reconciler tells it (kstatus ``Current``)."""
        return ANALYZER.compute(self.kube.api.sanitize_for_serialization(obj)).status == ObjectStatus.CURRENT.value

    def stop(self, timeout: float) -> dict[str, float]:
        """What it saw, once it saw all three (or ``timeout`` passed)."""
        self.thread.join(timeout)
        self.done.set()
        self.thread.join()
        return self.seen


def ready_revision(kube: Kube, name: str, revision: int, timeout: float) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        status = (kube.app_or_none(name) or {}).get("status") or {}
        return status if status.get("state") == "Ready" and status.get("revision") == revision else None

    found: dict[str, Any] = wait_until(ready, timeout, f"revision {revision} of {name} to be Ready", step=0.05)
    return found


def check_trace(sink: OtlpSink, entry: dict[str, Any], timeout: float) -> Span:
    """The revision's root arrived with one child per wave, each wave with its gates; returns the root."""
    trace = entry["traceId"]
    root: Span = wait_until(lambda: next((s for s in sink.received() if s.trace_id == trace and not s.parent_id),
                                         None), timeout, f"the root span of trace {trace}")
    spans = [s for s in sink.received() if s.trace_id == trace]
    assert [s.name for s in spans if not s.parent_id] == [f"revision {entry['revision']}"]
    waves = {s.span_id: s for s in spans if s.parent_id == root.span_id}
    assert sorted(s.name for s in waves.values()) == sorted(f"wave {w['wave']}" for w in entry["waves"])
    for wave in entry["waves"]:
        (span,) = [s for s in waves.values() if s.name == f"wave {wave['wave']}"]
        gates = sorted(s.name for s in spans if s.parent_id == span.span_id and s.name != "pass")
        assert gates == sorted(g.replace("/", " ", 1) for g in wave.get("gates") or ())
    passes = [s for s in spans if s.name == "pass"]
    assert passes and all(s.parent_id in waves for s in passes)
    assert {s.span_id for s in spans} >= {s.parent_id for s in spans if s.parent_id}  # no orphan
    return root


def test_one_trace_per_revision_explain_and_no_span_from_a_no_op_pass(traced_operator: OperatorProcess,
                                                                      kube: Kube, sink: OtlpSink) -> None:
    wait = default_wait(kube.cluster)
    readiness = Readiness(kube)
    started = time.monotonic()
    kube.apply_app("shop", spec("registry.invalid/app:1"))
    status = ready_revision(kube, "shop", 1, wait + 10)
    time_to_ready = time.monotonic() - started
    seen = readiness.stop(wait)
    seen_db, seen_web = seen["db ready"] - seen["db created"], seen["web ready"] - seen["db ready"]
    assert seen_db >= 7.9 and seen_web >= 1.9, seen  # kwok's delays acted

    printed = explain(kube, "shop")
    assert (printed.returncode, printed.stderr) == (0, ""), printed
    head, path, trace_line = printed.stdout.splitlines()
    assert head.startswith("Revision 1 of ") and ": Ready after " in head, head
    # kopf starts a new Application's first pass up to 2 s after its event: a step of its own.
    found = re.fullmatch(r"(?:first pass \d\.\d s → )?db StatefulSet (\d+\.\d) s → web Deployment (\d+\.\d) s", path)
    assert found is not None, path
    db, web = float(found[1]), float(found[2])
    assert abs(db - seen_db) <= 1 and abs(web - seen_web) <= 1, (path, seen_db, seen_web)
    entry = status["timeline"][-1]
    assert trace_line == f"Trace: {entry['traceId']}"

    root = check_trace(sink, entry, wait)
    assert abs(root.seconds - time_to_ready) <= 0.5, (root.seconds, time_to_ready)
    assert abs(root.seconds - entry["endedMs"] / 1000) < 0.002

    kube.apply_app("shop", spec("registry.invalid/app:2"))  # web's Pod again: 2 s
    second = ready_revision(kube, "shop", 2, wait)["timeline"][-1]
    check_trace(sink, second, wait)
    assert len({s.trace_id for s in sink.received()}) == 2  # one trace per revision

    wait_until(lambda: _settled(sink), wait, "the sink to receive no more spans")
    before = len(sink.received())
    for n in range(10):  # each request re-applies every object: a pass with writes, after Ready
        stamp = f"no-op-{n}"
        kube.apply_app("shop", spec("registry.invalid/app:2"), {f"{DOMAIN}/requested-at": stamp})
        wait_until(lambda stamp=stamp: (kube.app("shop").get("status") or {}).get("lastHandledReconcileAt") == stamp,
                   wait, f"request {stamp} to be handled", step=0.05)
    time.sleep(1.0)  # the batch processor sends within 0.1 s of a span's end
    assert len(sink.received()) == before
    assert kube.app("shop")["status"]["revision"] == 2


def _settled(sink: OtlpSink) -> bool:
    """No span arrived in half a second (the last pass's span is sent within 0.1 s of its end)."""
    count = len(sink.received())
    time.sleep(0.5)
    return len(sink.received()) == count
