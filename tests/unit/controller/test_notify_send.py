"""POSTs through the address guard (controller/service/notifysend.py), against a server on loopback."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from oam_operator.controller.service.notifysend import (
    DeliveryError,
    RefusedAddress,
    literal_refusal,
    notification_policy,
    post,
)
from oam_operator.oam.remote.addresses import parse_networks

LOOPBACK = notification_policy(parse_networks("127.0.0.1/32"))


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "http://169.254.169.254/latest")
            else:
                self.send_response(200 if self.path == "/ok" else 500)
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return None

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_loopback_is_refused_unless_allowed(server: str) -> None:
    with pytest.raises(RefusedAddress) as refused:
        asyncio.run(post(notification_policy(()), f"{server}/ok", b"{}", {}))
    assert str(refused.value) == (
        f'posting to "{server}/ok": refused to connect to 127.0.0.1: a loopback address (notifications may reach '
        "only public addresses); the operator allows internal networks listed in --notification-allowed-networks")
    asyncio.run(post(LOOPBACK, f"{server}/ok", b"{}", {}))


def test_a_redirect_is_not_followed(server: str) -> None:
    with pytest.raises(DeliveryError) as failed:
        asyncio.run(post(LOOPBACK, f"{server}/moved", b"{}", {}))
    assert str(failed.value) == f"posting to '{server}/moved': unexpected status 302 (redirects are not followed)"


def test_a_server_error_is_a_failed_delivery(server: str) -> None:
    with pytest.raises(DeliveryError) as failed:
        asyncio.run(post(LOOPBACK, f"{server}/broken", b"{}", {}))
    assert str(failed.value) == f"posting to '{server}/broken': unexpected status 500"


def test_a_name_resolving_to_loopback_is_refused_at_connection() -> None:
    with pytest.raises(RefusedAddress, match=r"refused to connect to localhost \((127\.0\.0\.1|::1)\): a loopback"):
        asyncio.run(post(notification_policy(()), "http://localhost:9/x", b"{}", {}))


def test_an_address_literal_is_refused_before_any_message() -> None:
    assert literal_refusal(LOOPBACK, "http://169.254.169.254/x") == (
        'posting to "http://169.254.169.254/x": refused to connect to 169.254.169.254: a link-local address '
        "(notifications may reach only public addresses); the operator allows internal networks listed in "
        "--notification-allowed-networks")
    assert literal_refusal(LOOPBACK, "http://127.0.0.1/x") is None
    assert literal_refusal(LOOPBACK, "http://hooks.example/x") is None  # a name is checked when connecting
