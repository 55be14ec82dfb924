"""The default ``UrlReader`` (transform.md §9.10): http(s) only, bounded in size, time and redirects.

The transform never does I/O itself; the CLI and the operator inject this reader so a
``manifests``/``crd`` URL source can be read when objects are generated.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from oam_operator.oam.errors import OamError
from oam_operator.oam.gofmt import go_quote

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


class HttpUrlReader:
    """Reads an http(s) URL; failures are ``OamError``s worded for ``manifest source: <…>``."""

    def __init__(self, timeout: float = TIMEOUT_SECONDS, max_bytes: int = MAX_BYTES) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._opener = urllib.request.build_opener(_Redirects())

    def read(self, url: str) -> bytes:
        try:
            with self._opener.open(url, timeout=self.timeout) as response:
                status = int(getattr(response, "status", 200))
                if not 200 <= status < 300:
                    raise OamError(f"reading {go_quote(url)}: unexpected status {status}")
                data: bytes = response.read(self.max_bytes + 1)
        except urllib.error.HTTPError as exc:
            raise OamError(f"reading {go_quote(url)}: unexpected status {exc.code}") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, OamError):
                raise exc.reason from exc
            raise OamError(f"reading {go_quote(url)}: {exc.reason}") from exc
        except (OSError, ValueError) as exc:
            raise OamError(f"reading {go_quote(url)}: {exc}") from exc
        if len(data) > self.max_bytes:
            raise OamError(f"{go_quote(url)} response exceeds max size {self.max_bytes} bytes")
        return data
