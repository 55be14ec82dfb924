"""API Priority and Fairness detection against the real local control plane
(reconciler/flowcontrol.py): its kube-apiserver marks responses with the APF headers, the
adaptive client turns its token bucket off, an explicit limit keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.runtime import Runtime
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.flowcontrol import FlowControl, has_priority_and_fairness
from oam_operator.reconciler.ratelimit import RateLimiter

pytestmark = pytest.mark.cluster


def test_the_local_api_server_sends_the_apf_headers(kube_api: Any) -> None:
    response = kube_api.call_api(*kube_api.param_serialize("GET", "/api/v1/namespaces/default",
                                                           auth_settings=["BearerToken"]))
    response.read()
    assert response.status == 200
    assert has_priority_and_fairness(response.headers)
    assert response.headers.get("X-Kubernetes-PF-FlowSchema-UID")
    assert response.headers.get("X-Kubernetes-PF-PriorityLevel-UID")


def test_an_adaptive_client_drops_its_bucket_after_one_request(kube_api: Any) -> None:
    limiter = RateLimiter(50.0, 100)
    client = ClusterClient(kube_api, rate_limiter=limiter, flow_control=FlowControl(limiter, adaptive=True))
    try:
        assert limiter.qps == 50.0
        client.request("get", "GET", "/api/v1/namespaces/default")
        assert client.flow_control is not None and client.flow_control.detected
        assert limiter.qps == 0.0
        # Impersonating clients share the flow control with their parent.
        assert client.impersonating("system:serviceaccount:default:x").flow_control is client.flow_control
    finally:
        client.close()


def test_an_explicit_limit_keeps_the_bucket_on_an_apf_server(kube_api: Any) -> None:
    limiter = RateLimiter(20.0, 40)
    client = ClusterClient(kube_api, rate_limiter=limiter, flow_control=FlowControl(limiter, adaptive=False))
    try:
        client.request("get", "GET", "/api/v1/namespaces/default")
        assert client.flow_control is not None and client.flow_control.detected
        assert (limiter.qps, limiter.burst) == (20.0, 40)
    finally:
        client.close()


@pytest.mark.parametrize(("flags", "bucket_after"), [({}, 0.0), ({"kube_api_qps": "50"}, 50.0),
                                                     ({"kube_api_qps": "0"}, 0.0)])
def test_the_operator_runtime_defaults(cluster: Any, flags: dict[str, str], bucket_after: float) -> None:
    settings = Settings.from_sources({"metrics_port": "0", **flags}, {})
    runtime = Runtime.create(settings, cluster.kubeconfig)  # reads the kube-system Namespace: the first request
    try:
        assert runtime.client.rate_limiter.qps == bucket_after
    finally:
        runtime.close()
