"""Events are posted in the background after the call (docs/reconciler.md#events-on-dependent-objects):
collected per call, sent in
order on the shared pool, as background requests that yield to queued ones in the rate limiter."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.events import EventRecorder, EventSender
from oam_operator.reconciler.ratelimit import RateLimiter

NOW = datetime(2026, 3, 1, 10, 4, 5, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


# -- background tokens ----------------------------------------------------------------------


def test_idle_acquire_takes_a_free_token_at_once() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 5, clock=clock, sleep=clock.sleep)
    assert limiter.acquire_idle() == 0
    for _ in range(4):
        assert limiter.acquire() == 0  # the idle request took one token of the burst, no more
    assert limiter.acquire() == pytest.approx(0.1)


def test_idle_acquire_yields_to_queued_requests() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 1, clock=clock, sleep=lambda s: None)  # foreground reservations only
    for _ in range(6):
        limiter.acquire()  # one from the burst, five queued: served at 0.1 ... 0.5 s
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds

    limiter._sleep = sleep  # type: ignore[method-assign]
    waited = limiter.acquire_idle()
    # The queue is served first (until 0.5 s), then a whole free token (0.6 s).
    assert waited == pytest.approx(0.6)
    assert clock.now == pytest.approx(0.6)


def test_idle_acquire_queues_after_its_patience() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 1, clock=clock, sleep=lambda s: None)
    for _ in range(51):
        limiter.acquire()  # a 5 s backlog
    limiter._sleep = clock.sleep  # type: ignore[method-assign]
    waited = limiter.acquire_idle(patience=1.0)
    assert 1.0 <= waited <= 1.0 + 5.0 + 1e-6  # polled for 1 s, then took its place in the queue
    assert clock.now == pytest.approx(5.1)  # served right after the backlog, not starved


def test_idle_acquire_without_limit() -> None:
    assert RateLimiter(0, 1).acquire_idle() == 0


# -- sender ---------------------------------------------------------------------------------


class FakeEventClient:
    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.posted: list[tuple[str, str, bool]] = []
        self.gate = threading.Event()
        self.gate.set()

    def create_event(self, namespace: str, event: Mapping[str, Any], *, background: bool = False) -> None:
        self.gate.wait(5)
        if event["reason"] == "Broken":
            raise RuntimeError("server said no")
        self.posted.append((namespace, event["reason"], background))


def test_sender_posts_in_order_in_the_background_and_survives_failures() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        client = FakeEventClient(pool)
        sender = EventSender(client)  # type: ignore[arg-type]
        client.gate.clear()
        sender.submit([("a", {"reason": "One"}), ("a", {"reason": "Broken"}), ("b", {"reason": "Two"})])
        assert client.posted == [] and sender.pending == 3  # submit() did not wait
        sender.submit([("c", {"reason": "Three"})])
        client.gate.set()
        assert sender.wait(5)
    assert client.posted == [("a", "One", True), ("b", "Two", True), ("c", "Three", True)]
    assert sender.pending == 0


def test_sender_posts_in_the_callers_thread_when_the_pool_is_shut_down() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    client = FakeEventClient(pool)
    EventSender(client).submit([("a", {"reason": "Late"})])  # type: ignore[arg-type]
    assert client.posted == [("a", "Late", True)]


# -- recorder and client wiring against a stub API server -----------------------------------


class Handler(BaseHTTPRequestHandler):
    posted: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.posted.append((self.path.split("?")[0], body))
        data = json.dumps(body).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[ClusterClient]:
    Handler.posted = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    configuration = Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    configuration.proxy = None
    api = ApiClient(configuration)
    pool = ThreadPoolExecutor(max_workers=2)
    client = ClusterClient(api, rate_limiter=RateLimiter(0, 1), executor=pool)
    yield client
    client.close()
    pool.shutdown()
    api.close()
    server.shutdown()
    server.server_close()


def configmap(name: str, namespace: str = "shop") -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "42"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def test_recorder_sends_nothing_until_the_call_ends(stub: ClusterClient) -> None:
    recorder = EventRecorder(stub, "r.test", True, lambda: NOW)
    recorder.emit(configmap("a"), "Normal", "Created", "Object successfully created")
    recorder.emit({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}, "Normal", "Orphaned", "x")
    assert stub.accounting.count(verb="event") == 0
    recorder.flush()
    assert stub.flush_events(5)
    assert stub.accounting.count(verb="event", status=201) == 2
    (path_a, event_a), (path_n, _) = Handler.posted
    assert path_a == "/api/v1/namespaces/shop/events" and path_n == "/api/v1/namespaces/default/events"
    assert event_a == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "a.", "namespace": "shop"},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "a",
            "uid": "uid-a",
            "resourceVersion": "42",
            "namespace": "shop",
        },
        "type": "Normal",
        "reason": "Created",
        "message": "Object successfully created",
        "source": {"component": "r.test"},
        "reportingComponent": "r.test",
        "firstTimestamp": "2026-03-01T10:04:05Z",
        "lastTimestamp": "2026-03-01T10:04:05Z",
        "count": 1,
    }
    recorder.flush()  # nothing new
    assert stub.flush_events(5) and len(Handler.posted) == 2


def test_disabled_recorder_sends_nothing(stub: ClusterClient) -> None:
    recorder = EventRecorder(stub, "r.test", False, lambda: NOW)
    recorder.emit(configmap("a"), "Normal", "Created", "Object successfully created")
    recorder.flush()
    assert stub.flush_events(5) and Handler.posted == []


def test_impersonating_clients_queue_on_the_operator_identity(stub: ClusterClient) -> None:
    tenant = stub.impersonating("system:serviceaccount:shop:deployer")
    recorder = EventRecorder(tenant, "r.test", True, lambda: NOW)
    recorder.emit(configmap("a"), "Normal", "Created", "Object successfully created")
    recorder.flush()
    assert tenant.flush_events(5)
    assert len(Handler.posted) == 1
    tenant.close()  # closing a tenant client neither waits for nor drops the operator's Events


def test_close_flushes_queued_events(stub: ClusterClient) -> None:
    recorder = EventRecorder(stub, "r.test", True, lambda: NOW)
    for i in range(5):
        recorder.emit(configmap(f"c{i}"), "Normal", "Created", "Object successfully created")
    recorder.flush()
    stub.close()
    assert len(Handler.posted) == 5
