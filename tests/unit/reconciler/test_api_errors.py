"""API error mapping against a stub server on loopback (docs/reconciler.md#errors):
429 carries Retry-After."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.errors import PermanentApiError, TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter

RESPONSES = {
    "/api/v1/namespaces/ns/configmaps/throttled": (429, {"Retry-After": "7"}, "TooManyRequests", "slow down"),
    "/api/v1/namespaces/ns/configmaps/invalid": (422, {}, "Invalid", 'ConfigMap "invalid" is invalid'),
    "/api/v1/namespaces/ns/configmaps/conflict": (409, {}, "Conflict", "the object has been modified"),
    "/api/v1/namespaces/ns/configmaps/missing": (404, {}, "NotFound", 'configmaps "missing" not found'),
}


class Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        status, headers, reason, message = RESPONSES.get(self.path.split("?")[0], (200, {}, "", ""))
        body = json.dumps(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": reason,
                "message": message,
                "code": status,
            }
            if status != 200
            else {"kind": "ConfigMap", "metadata": {"name": "ok"}}
        ).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_PATCH = do_POST = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stub_client() -> Iterator[ClusterClient]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    configuration = Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    configuration.proxy = None
    api = ApiClient(configuration)
    client = ClusterClient(api, rate_limiter=RateLimiter(0, 1))
    yield client
    client.close()
    api.close()
    server.shutdown()
    server.server_close()


CM = ApiResource("", "v1", "ConfigMap", "configmaps", True, ())


def test_429_carries_retry_after(stub_client: ClusterClient) -> None:
    with pytest.raises(TransientApiError) as info:
        stub_client.get(CM, "ns", "throttled")
    assert info.value.retry_after == 7
    assert info.value.status == 429 and info.value.retryable
    assert str(info.value) == "429 Too Many Requests: slow down"
    assert stub_client.accounting.count(verb="get", status=429) == 1


def test_422_is_permanent_and_409_transient(stub_client: ClusterClient) -> None:
    with pytest.raises(PermanentApiError) as info:
        stub_client.replace(CM, "ns", "invalid", {"metadata": {"name": "invalid"}}, field_manager="m")
    assert str(info.value) == '422 Unprocessable Entity: ConfigMap "invalid" is invalid'
    assert info.value.reason == "Invalid" and info.value.verb == "update"
    with pytest.raises(TransientApiError) as conflict:
        stub_client.replace(CM, "ns", "conflict", {"metadata": {"name": "conflict"}}, field_manager="m")
    assert conflict.value.status == 409
    assert str(conflict.value.with_context("error updating object x")) == (
        "error updating object x: 409 Conflict: the object has been modified"
    )
    assert isinstance(conflict.value.with_context("ctx"), TransientApiError)


def test_404_read_is_absent_and_404_write_transient(stub_client: ClusterClient) -> None:
    assert stub_client.get(CM, "ns", "missing") is None
    with pytest.raises(TransientApiError):
        stub_client.replace(CM, "ns", "missing", {"metadata": {"name": "missing"}}, field_manager="m")
    assert stub_client.delete(CM, "ns", "missing") is False
    assert stub_client.accounting.reads == 1 and stub_client.accounting.writes == 2


def test_connection_error_is_transient() -> None:
    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"  # discard port: connection refused
    configuration.retries = False
    api = ApiClient(configuration)
    client = ClusterClient(api, rate_limiter=RateLimiter(0, 1))
    with pytest.raises(TransientApiError) as info:
        client.get(CM, "ns", "x")
    assert info.value.status == 0
    client.close()
    api.close()
