"""Server-side flow control detection (reconciler/flowcontrol.py): the client-side bucket goes
off on a server with API Priority and Fairness, unless the limit was set explicitly."""

from __future__ import annotations

from urllib3 import HTTPHeaderDict

from oam_operator.reconciler.flowcontrol import APF_HEADERS, FlowControl, has_priority_and_fairness
from oam_operator.reconciler.ratelimit import RateLimiter

APF = {"X-Kubernetes-PF-FlowSchema-UID": "9f1c", "X-Kubernetes-PF-PriorityLevel-UID": "77aa"}


def test_the_headers_are_the_api_servers() -> None:
    assert APF_HEADERS == ("X-Kubernetes-PF-FlowSchema-UID", "X-Kubernetes-PF-PriorityLevel-UID")


def test_detection_from_either_header_in_any_case() -> None:
    assert has_priority_and_fairness(APF)
    assert has_priority_and_fairness({"X-Kubernetes-PF-PriorityLevel-UID": "77aa"})
    assert has_priority_and_fairness({"x-kubernetes-pf-flowschema-uid": "9f1c"})
    assert has_priority_and_fairness(HTTPHeaderDict({"X-KUBERNETES-PF-FLOWSCHEMA-UID": "9f1c"}))


def test_no_detection_without_the_headers() -> None:
    assert not has_priority_and_fairness(None)
    assert not has_priority_and_fairness({})
    assert not has_priority_and_fairness({"Content-Type": "application/json", "Audit-Id": "1"})
    assert not has_priority_and_fairness({"X-Kubernetes-PF-FlowSchema-UID": ""})  # empty is not a UID


def test_adaptive_turns_the_bucket_off_on_the_first_apf_response() -> None:
    limiter = RateLimiter(50.0, 100)
    flow = FlowControl(limiter, adaptive=True)
    flow.observe({"Content-Type": "application/json"})
    assert not flow.detected and flow.client_side_limit and limiter.qps == 50.0
    flow.observe(APF)
    assert flow.detected and not flow.client_side_limit
    assert limiter.qps == 0.0 and limiter.burst == 100
    flow.observe({})  # a later response without the headers does not bring the bucket back
    assert not flow.client_side_limit


def test_an_explicit_limit_keeps_the_bucket() -> None:
    limiter = RateLimiter(20.0, 40)
    flow = FlowControl(limiter, adaptive=False)
    flow.observe(APF)
    assert flow.detected and flow.client_side_limit and (limiter.qps, limiter.burst) == (20.0, 40)


def test_a_disabled_bucket_stays_disabled() -> None:
    limiter = RateLimiter(0.0, 1)
    flow = FlowControl(limiter, adaptive=True)
    flow.observe(APF)
    assert flow.detected and not flow.client_side_limit


def test_a_disabled_bucket_does_not_sleep() -> None:
    slept: list[float] = []
    limiter = RateLimiter(1.0, 1, sleep=slept.append, clock=lambda: 0.0)
    FlowControl(limiter, adaptive=True).observe(APF)
    for _ in range(5):
        limiter.acquire()
    assert slept == []
