"""Adaptive concurrency against the real local control plane (docs/operator.md#adaptive-concurrency):
the API server's own API Priority and Fairness rejection — for one impersonated user, a priority
level with the least concurrency there is (one seat) that rejects what does not fit — reaches the
limit as 429s with ``Retry-After`` through ``ClusterClient``'s request timings and halves it once
per cooldown; ordinary requests report their latency. The limiter's clock is a fake one, so the
cooldown does not depend on how fast the machine is."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from oam_operator.controller.service.passlimiter import PassLimiter
from oam_operator.reconciler.accounting import RequestTiming
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.ratelimit import RateLimiter
from tools.devcluster.pytest_plugin import wait_until

pytestmark = pytest.mark.cluster

APF = "/apis/flowcontrol.apiserver.k8s.io/v1"


@pytest.fixture
def throttled_user(kube_api: Any) -> Iterator[str]:
    """A user whose concurrent requests the server rejects with 429: its FlowSchema leads to a
    priority level with no nominal shares (the server still gives it one seat), none to borrow,
    and ``Reject`` as the response to a full level."""
    name = f"oam-throttled-{uuid.uuid4().hex[:8]}"
    admin = ClusterClient(kube_api, rate_limiter=RateLimiter(0.0, 1))
    level = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "lendablePercent": 0,
                                                "borrowingLimitPercent": 0, "limitResponse": {"type": "Reject"}}},
    }
    schema = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
        "spec": {"priorityLevelConfiguration": {"name": name}, "matchingPrecedence": 50,
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": name}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                               "clusterScope": True, "namespaces": ["*"]}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]},
    }
    admin.request("create", "POST", f"{APF}/prioritylevelconfigurations", body=level)
    admin.request("create", "POST", f"{APF}/flowschemas", body=schema)
    try:
        yield name
    finally:
        admin.request("delete", "DELETE", f"{APF}/flowschemas/{name}")
        admin.request("delete", "DELETE", f"{APF}/prioritylevelconfigurations/{name}")
        admin.close()


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_apf_rejections_halve_the_limit_once_per_cooldown(kube_api: Any, throttled_user: str) -> None:
    client = ClusterClient(kube_api, rate_limiter=RateLimiter(0.0, 1))
    timings: list[RequestTiming] = []
    clock = Clock()
    limiter = PassLimiter(10, initial=8, clock=clock)
    client.accounting.observers.extend([timings.append, limiter.observe_request])
    user = client.impersonating(throttled_user)
    pool = ThreadPoolExecutor(32)
    try:
        # Ordinary requests of the operator's identity: timed, and the limit keeps its value.
        for _ in range(3):
            client.request("get", "GET", "/api/v1/namespaces/default")
        assert [(t.verb, t.status, t.retry_after) for t in timings] == [("get", 200, None)] * 3
        assert all(0.0 < t.seconds < 10.0 for t in timings)
        assert limiter.limit == 8

        def one() -> int:
            try:
                user.request("get", "GET", "/api/v1/namespaces/default")
            except ApiError as error:  # 403 when served: the user has no rights; 429 when rejected
                return error.status
            return 200

        def burst() -> bool:
            """32 requests at once on one seat: some are rejected (a 403 only until the server has the schema)."""
            return 429 in list(pool.map(lambda _: one(), range(32)))

        wait_until(burst, 60, "the API server to apply the FlowSchema and reject with 429")
        throttled = [t for t in timings if t.status == 429]
        assert throttled and all(t.retry_after is not None and t.retry_after >= 1 for t in throttled)
        assert limiter.limit == 4  # however many 429s: one halving within the cooldown
        assert limiter.state is not None and limiter.state.last_change == "throttled"
        clock.now += 1.0  # the cooldown (no pass has finished: its minimum, 1 s) is over
        wait_until(burst, 60, "another 429")
        assert limiter.limit == 2
    finally:
        pool.shutdown()
        client.close()
