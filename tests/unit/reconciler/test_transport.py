"""The request path to the API server (reconciler/transport.py): what goes on the wire, checked
against a local HTTP server that records each request."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.reconciler.transport import Transport, encode_body, url_of


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str, dict[str, str], bytes]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        Recorder.seen.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
        body = b'{"kind": "Status"}'
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PATCH = do_POST = _answer

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.seen = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_request_carries_the_body_query_headers_and_a_refreshed_token(server: str) -> None:
    configuration = Configuration()
    configuration.host = server
    configuration.api_key = {"authorization": "old"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    refreshed: list[int] = []

    def refresh(config: Configuration) -> None:
        refreshed.append(1)
        config.api_key = {"authorization": f"token-{len(refreshed)}"}

    configuration.refresh_api_key_hook = refresh
    api = ApiClient(configuration)
    api.user_agent = "oam-operator-test"
    api.set_default_header("Impersonate-User", "system:serviceaccount:shop:deployer")
    response = Transport(api).open(
        "PATCH", "/api/v1/namespaces/shop/configmaps/a",
        query=[("fieldManager", "oam operator"), ("force", "true")],
        body={"data": {"note": "café"}}, headers={"Content-Type": "application/apply-patch+yaml"},
        timeout=(5.0, 5.0))
    assert (response.status, response.data) == (201, b'{"kind": "Status"}')
    response.release_conn()
    [(method, path, headers, body)] = Recorder.seen
    assert (method, path) == ("PATCH", "/api/v1/namespaces/shop/configmaps/a?fieldManager=oam%20operator&force=true")
    assert body == '{"data":{"note":"café"}}'.encode()
    assert headers["Content-Type"] == "application/apply-patch+yaml"
    assert headers["User-Agent"] == "oam-operator-test"
    assert headers["Impersonate-User"] == "system:serviceaccount:shop:deployer"
    assert headers["authorization"] == "Bearer token-1"


def test_without_credentials_no_authorization_header_is_sent(server: str) -> None:
    configuration = Configuration()
    configuration.host = server
    Transport(ApiClient(configuration)).open("GET", "/version", headers={}, timeout=(5.0, 5.0)).release_conn()
    [(method, path, headers, body)] = Recorder.seen
    assert (method, path, body) == ("GET", "/version", b"")
    assert "authorization" not in {name.lower() for name in headers}


def test_urls_and_bodies() -> None:
    assert url_of("https://h:6443", "/api", ()) == "https://h:6443/api"
    assert url_of("https://h", "/api", [("labelSelector", "a in (x,y)"), ("limit", "5")]) == (
        "https://h/api?labelSelector=a%20in%20%28x%2Cy%29&limit=5")
    assert encode_body(None) is None
    assert encode_body(b"raw") == b"raw"
    assert encode_body('{"kind": "café"}') == '{"kind": "café"}'.encode()
    assert encode_body([{"op": "remove", "path": "/a"}]) == b'[{"op":"remove","path":"/a"}]'
