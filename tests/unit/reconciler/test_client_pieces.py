"""Pure parts of the client seam: token bucket, discovery miss rule, error classes, fan-out."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from oam_operator.reconciler.accounting import RequestAccounting
from oam_operator.reconciler.client import classify_api_error
from oam_operator.reconciler.concurrency import run_bounded
from oam_operator.reconciler.discovery import Discovery
from oam_operator.reconciler.errors import PermanentApiError, TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_token_bucket_burst_then_qps() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 10, clock=clock, sleep=clock.sleep)
    for _ in range(60):
        limiter.acquire()
    # 10 from the burst, 50 at 10 per second.
    assert clock.now == pytest.approx(5.0)


def test_token_bucket_refills() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, 1, clock=clock, sleep=clock.sleep)
    assert limiter.acquire() == 0
    clock.now += 10  # refills to the burst, never beyond
    assert limiter.acquire() == 0
    assert limiter.acquire() == pytest.approx(0.5)


def test_disabled_limiter() -> None:
    limiter = RateLimiter(0, 1)
    assert all(limiter.acquire() == 0 for _ in range(100))


@pytest.mark.parametrize(
    ("status", "read", "cls"),
    [
        (401, False, TransientApiError),
        (409, False, TransientApiError),
        (410, True, TransientApiError),
        (425, False, TransientApiError),
        (429, False, TransientApiError),
        (500, False, TransientApiError),
        (502, True, TransientApiError),
        (503, True, TransientApiError),
        (504, False, TransientApiError),
        (0, True, TransientApiError),
        (404, False, TransientApiError),
        (404, True, PermanentApiError),
        (400, False, PermanentApiError),
        (403, False, PermanentApiError),
        (405, False, PermanentApiError),
        (406, False, PermanentApiError),
        (413, False, PermanentApiError),
        (415, False, PermanentApiError),
        (422, False, PermanentApiError),
    ],
)
def test_error_classification(status: int, read: bool, cls: type) -> None:
    assert classify_api_error(status, read) is cls
    assert cls.retryable is (cls is TransientApiError)


@pytest.mark.parametrize(
    ("status", "message", "cls"),
    [
        (500, "failed to create typed patch object (/v1, Kind=ConfigMap): .data.a: expected string, "
              "got &value.valueUnstructured{Value:1}", PermanentApiError),
        (500, "etcdserver: request is too large", PermanentApiError),
        (500, 'admission webhook "deny.example.com" denied the request: no', PermanentApiError),
        (500, 'Internal error occurred: failed calling webhook "deny.example.com": connection refused',
         TransientApiError),
        (500, "Internal error occurred: unexpected", TransientApiError),
        (503, "etcdserver: leader changed", TransientApiError),
        (429, "failed to create typed patch object", TransientApiError),
    ],
)
def test_deterministic_server_errors_are_permanent(status: int, message: str, cls: type) -> None:
    """A 5xx that will fail the same way on every retry is permanent; a 429 never is."""
    assert classify_api_error(status, False, message) is cls


def discovery_documents(extra_group: bool) -> dict[str, Mapping[str, Any]]:
    docs: dict[str, Mapping[str, Any]] = {
        "/api": {"versions": ["v1"]},
        "/apis": {
            "groups": [
                {"name": "apps", "versions": [{"version": "v1"}], "preferredVersion": {"version": "v1"}},
            ]
            + (
                [{"name": "x.dev", "versions": [{"version": "v1"}], "preferredVersion": {"version": "v1"}}]
                if extra_group
                else []
            )
        },
        "/api/v1": {
            "resources": [
                {"name": "configmaps", "kind": "ConfigMap", "namespaced": True, "verbs": ["get", "list"]},
                {"name": "namespaces", "kind": "Namespace", "namespaced": False, "verbs": ["get"]},
                {"name": "namespaces/status", "kind": "Namespace", "namespaced": False, "verbs": ["get"]},
            ]
        },
        "/apis/apps/v1": {"resources": [{"name": "deployments", "kind": "Deployment", "namespaced": True}]},
        "/apis/x.dev/v1": {"resources": [{"name": "foos", "kind": "Foo", "namespaced": False}]},
    }
    return docs


def test_discovery_lookup_and_miss_rule() -> None:
    clock = FakeClock()
    state = {"extra": False, "fetches": 0}

    def fetch(path: str) -> Mapping[str, Any]:
        state["fetches"] += 1
        return discovery_documents(bool(state["extra"]))[path]

    d = Discovery(fetch, clock=clock)
    cm = d.lookup("v1", "ConfigMap")
    assert cm is not None and cm.plural == "configmaps" and cm.namespaced
    assert cm.path("ns", "c") == "/api/v1/namespaces/ns/configmaps/c"
    ns = d.lookup("v1", "Namespace")
    assert ns is not None and not ns.namespaced and ns.path("", "x") == "/api/v1/namespaces/x"
    dep = d.lookup("apps/v1", "Deployment")
    assert dep is not None and dep.path("ns") == "/apis/apps/v1/namespaces/ns/deployments"
    fetches = state["fetches"]
    assert d.lookup("v1", "ConfigMap") is cm  # cached: no request
    assert state["fetches"] == fetches

    # A miss re-discovers (first time), then not again within 10 s.
    assert d.lookup("x.dev/v1", "Foo") is None
    after_first_miss = state["fetches"]
    assert after_first_miss > fetches
    state["extra"] = True
    clock.now += 5
    assert d.lookup("x.dev/v1", "Foo") is None
    assert state["fetches"] == after_first_miss
    clock.now += 5
    foo = d.lookup("x.dev/v1", "Foo")
    assert foo is not None and foo.path("", "a") == "/apis/x.dev/v1/foos/a"


def test_discovery_types_changed_window() -> None:
    clock = FakeClock()
    state = {"extra": False}
    d = Discovery(lambda p: discovery_documents(state["extra"])[p], clock=clock)
    assert d.lookup("x.dev/v1", "Foo") is None
    d.types_changed()
    state["extra"] = True
    clock.now += 1
    assert d.lookup("x.dev/v1", "Foo") is not None


def test_server_preferred_resources() -> None:
    d = Discovery(lambda p: discovery_documents(True)[p])
    kinds = sorted(r.kind for r in d.server_preferred_resources())
    assert kinds == ["ConfigMap", "Deployment", "Foo", "Namespace"]


def test_run_bounded_limits_in_flight_and_keeps_order() -> None:
    accounting = RequestAccounting()
    lock = threading.Lock()

    def task(i: int) -> int:
        accounting.started()
        time.sleep(0.01)
        accounting.finished("get", "GET", 200)
        if i == 7:
            raise ValueError("seven")
        return i * i

    with ThreadPoolExecutor(max_workers=16) as pool, lock:
        outcomes = run_bounded(pool, [lambda i=i: task(i) for i in range(40)], 3)  # type: ignore[misc]
    assert accounting.max_in_flight <= 3
    assert accounting.count(verb="get") == 40
    assert [o.value for o in outcomes if o.error is None] == [i * i for i in range(40) if i != 7]
    assert str(outcomes[7].error) == "seven"
