"""URL sources are cached in the operator (docs/operator.md#url-sources-are-cached): after the
first read, a pass of an unchanged source is a conditional GET answered ``304 Not Modified``
(neither downloaded nor parsed), and a changed source is read and applied at the next pass."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from e2ekit import GROUP, VERSION, Kube

from tools.devcluster.pytest_plugin import default_wait, wait_until


class _Source(http.server.ThreadingHTTPServer):
    body = b""
    answers: list[int]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Source

    def do_GET(self) -> None:
        body = self.server.body
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        fresh = self.headers.get("If-None-Match") == etag
        self.server.answers.append(304 if fresh else 200)
        self.send_response(304 if fresh else 200)
        self.send_header("ETag", etag)
        self.send_header("Content-Length", "0" if fresh else str(len(body)))
        self.end_headers()
        if not fresh:
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def source() -> Iterator[_Source]:
    server = _Source(("127.0.0.1", 0), _Handler)
    server.answers = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def manifest(value: str) -> bytes:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: remote}}\ndata: {{key: {value}}}\n".encode()


def reconcile(kube: Kube, requested: str) -> None:
    kube.custom.patch_namespaced_custom_object(
        GROUP, VERSION, kube.namespace, "applications", "remote",
        {"metadata": {"annotations": {f"{GROUP}/requested-at": requested}}})
    wait_until(lambda: (kube.app("remote").get("status") or {}).get("lastHandledReconcileAt") == requested
               and kube.ready("remote") is not None, default_wait(kube.cluster), f"the reconcile {requested}")


def test_an_unchanged_source_is_answered_not_modified_and_a_change_is_applied(
        start_operator: Any, kube: Kube, source: _Source) -> None:
    source.body = manifest("one")
    start_operator(kube.namespace, "--url-source-allowed-networks", "127.0.0.0/8")
    url = f"http://127.0.0.1:{source.server_address[1]}/objects.yaml"
    kube.apply_app("remote", {"components": [{"name": "remote", "type": "manifests", "properties": {"url": url}}]})
    kube.wait_ready("remote")
    reconcile(kube, "first")
    reconcile(kube, "second")
    assert source.answers[0] == 200 and len(source.answers) >= 3
    assert set(source.answers[1:]) == {304}  # every later pass: not downloaded, not parsed

    source.body = manifest("two")
    seen = len(source.answers)
    reconcile(kube, "third")
    assert source.answers[seen] == 200
    wait_until(lambda: kube.core.read_namespaced_config_map("remote", kube.namespace).data == {"key": "two"},
               default_wait(kube.cluster), "the changed source to be applied")
