"""Request timings (reconciler/accounting.py, reconciler/client.py): every answered request reaches
the accounting's observers with its latency and ``Retry-After``; unanswered ones and watches do not."""

from __future__ import annotations

from typing import Any

import pytest
import urllib3
from kubernetes.client import ApiClient, Configuration

from oam_operator.reconciler.accounting import RequestAccounting, RequestTiming
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter


class Response:
    """What the transport returns: urllib3's response, its body not read yet."""

    def __init__(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.status = status
        self.data = data
        self.headers = urllib3.HTTPHeaderDict(headers)

    def release_conn(self) -> None:
        pass


def scripted_client(*answers: Response | Exception) -> tuple[ClusterClient, list[RequestTiming]]:
    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    client = ClusterClient(ApiClient(configuration), rate_limiter=RateLimiter(0.0, 1))
    pending = list(answers)

    def open_request(*_: Any, **__: Any) -> Response:
        answer = pending.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client._transport.open = open_request  # type: ignore[method-assign, assignment]
    timings: list[RequestTiming] = []
    client.accounting.observers.append(timings.append)
    return client, timings


def test_an_answered_request_is_timed() -> None:
    client, timings = scripted_client(Response(200, b'{"kind": "Namespace"}', {}))
    assert client.request("get", "GET", "/api/v1/namespaces/default") == {"kind": "Namespace"}
    [timing] = timings
    assert (timing.verb, timing.method, timing.status, timing.retry_after) == ("get", "GET", 200, None)
    assert 0.0 <= timing.seconds < 5.0


def test_a_429_is_timed_with_its_retry_after() -> None:
    body = b'{"message": "too many requests, please try again later", "reason": "TooManyRequests"}'
    client, timings = scripted_client(Response(429, body, {"Retry-After": "3"}))
    with pytest.raises(TransientApiError) as raised:
        client.request("apply", "PATCH", "/api/v1/namespaces/default/configmaps/a")
    assert raised.value.retry_after == 3.0
    assert [(t.verb, t.status, t.retry_after) for t in timings] == [("apply", 429, 3.0)]


def test_a_request_without_a_response_is_not_timed() -> None:
    client, timings = scripted_client(urllib3.exceptions.NewConnectionError(None, "refused"))  # type: ignore[arg-type]
    with pytest.raises(TransientApiError):
        client.request("get", "GET", "/api/v1/namespaces/default")
    assert timings == []
    assert client.accounting.count(status=0) == 1  # still counted


def test_impersonating_clients_share_the_observers() -> None:
    client, timings = scripted_client(Response(200, b"{}", {}))
    tenant = client.impersonating("system:serviceaccount:shop:deployer")
    tenant._transport.open = client._transport.open  # type: ignore[method-assign]
    tenant.request("list", "GET", "/api/v1/namespaces/shop/configmaps")
    assert [t.verb for t in timings] == ["list"]


def test_observers_run_after_the_count() -> None:
    accounting = RequestAccounting()
    seen: list[tuple[int, RequestTiming]] = []
    accounting.observers.append(lambda timing: seen.append((accounting.total, timing)))
    accounting.started()
    accounting.finished("get", "GET", 200)
    accounting.timed(RequestTiming("get", "GET", 200, 0.004))
    assert seen == [(1, RequestTiming("get", "GET", 200, 0.004, None))]
