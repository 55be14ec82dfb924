"""The default ``UrlReader`` (docs/transform.md#raw-objects-passthrough-crd-and-manifests): http(s) only, bounded in
size, time and redirects.

The transform never does I/O itself; the pipeline (``pipeline.py``) injects this reader so a
``manifests``/``crd`` URL source can be read when objects are generated.

With an ``AddressPolicy`` (the operator's case, docs/operator.md#url-sources-and-charts)
every connection, the first and each redirect's, is checked at the moment it is made: the
host is resolved, every address must pass the policy, and the socket connects to exactly a
checked address. Proxies from the environment are then not used, because the address
checked would be the proxy's, not the one the tenant named.
"""

from __future__ import annotations

import functools
import http.client
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.remote.addresses import AddressPolicy

MAX_BYTES = 5 * 1024 * 1024
TIMEOUT_SECONDS = 30.0
MAX_REDIRECTS = 10


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise OamError(f"reading {go_quote(req.full_url)}: redirect to a non-http(s) url")
        return super().redirect_request(req, fp, code, msg, headers, newurl)

    def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> Any:
        visited = getattr(req, "redirect_dict", {})
        if sum(visited.values()) >= MAX_REDIRECTS:
            raise OamError(f"too many redirects (>{MAX_REDIRECTS})")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _guarded_socket(
    policy: AddressPolicy, url: str, address: tuple[str, int], timeout: Any = None, source_address: Any = None
) -> socket.socket:
    """``socket.create_connection`` that connects only to addresses ``policy`` lets through."""
    host, port = address
    last: OSError | None = None
    for family, sockaddr in policy.check_host(url, host, port):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            if isinstance(timeout, int | float):
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last if last is not None else OSError(f"no address for {host}")


class _GuardedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, policy: AddressPolicy, url: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_guarded_socket, policy, url)


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, policy: AddressPolicy, url: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_guarded_socket, policy, url)


class _GuardedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, policy: AddressPolicy) -> None:
        super().__init__()
        self.policy = policy

    def http_open(self, req: Any) -> Any:
        return self.do_open(functools.partial(_GuardedHTTPConnection, policy=self.policy, url=req.full_url), req)


class _GuardedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, policy: AddressPolicy) -> None:
        super().__init__()
        self.policy = policy

    def https_open(self, req: Any) -> Any:
        connection = functools.partial(_GuardedHTTPSConnection, policy=self.policy, url=req.full_url)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Fetched:
    """One response: its body (``None``: not modified) and its validators (``""``: none)."""

    data: bytes | None
    etag: str = ""
    last_modified: str = ""


class HttpUrlReader:
    """Reads an http(s) URL; failures are ``OamError``s worded for ``manifest source: <…>``.

    ``policy`` (optional) restricts the addresses it connects to (module docstring).
    """

    def __init__(
        self, timeout: float = TIMEOUT_SECONDS, max_bytes: int = MAX_BYTES, policy: AddressPolicy | None = None
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.policy = policy
        if policy is None:
            self._opener = urllib.request.build_opener(_Redirects())
        else:
            self._opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({}), _GuardedHTTPHandler(policy), _GuardedHTTPSHandler(policy), _Redirects()
            )

    def read(self, url: str) -> bytes:
        fetched = self.fetch(url)
        assert fetched.data is not None  # without validators there is no 304
        return fetched.data

    def fetch(self, url: str, etag: str = "", last_modified: str = "") -> Fetched:
        """GET ``url``; with a validator of an earlier response, a conditional GET whose ``304
        Not Modified`` is ``Fetched(None, …)`` (docs/operator.md#url-sources-are-cached)."""
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            with self._opener.open(urllib.request.Request(url, headers=headers), timeout=self.timeout) as response:
                status = int(getattr(response, "status", 200))
                if not 200 <= status < 300:
                    raise OamError(f"reading {go_quote(url)}: unexpected status {status}")
                data: bytes = response.read(self.max_bytes + 1)
                found = (response.headers.get("ETag") or "", response.headers.get("Last-Modified") or "")
        except urllib.error.HTTPError as exc:
            if exc.code == 304 and headers:
                return Fetched(None, exc.headers.get("ETag") or etag, exc.headers.get("Last-Modified") or last_modified)
            raise OamError(f"reading {go_quote(url)}: unexpected status {exc.code}") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, OamError):
                raise exc.reason from exc
            raise OamError(f"reading {go_quote(url)}: {exc.reason}") from exc
        except (OSError, ValueError) as exc:
            raise OamError(f"reading {go_quote(url)}: {exc}") from exc
        if len(data) > self.max_bytes:
            raise OamError(f"{go_quote(url)} response exceeds max size {self.max_bytes} bytes")
        return Fetched(data, *found)
