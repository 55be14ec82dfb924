"""HTTP requests to the API server on the kubernetes client's own connection pool
(docs/operator.md#operator-cpu).

The generated client's ``param_serialize`` and ``call_api`` walk every body and header through
its model sanitizer, encode the body with the standard library and dispatch on the content type.
The reconciler's bodies are already plain JSON values and its paths already built, so a request
here is only the URL, the headers and orjson's bytes, sent through the same urllib3 pool (its TLS
settings, client certificate and proxy) with the same credentials: the configuration's bearer
token, refreshed by its hook as the client would refresh it, and the client's default headers
(User-Agent, Impersonate-User). Measured on a ConfigMap's apply: 0.75 ms of CPU a request
against 0.83 ms through the generated client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes.client import ApiClient

from . import jsoncodec

__all__ = ["Transport", "encode_body", "url_of"]


class Transport:
    """Sends requests for one ``ApiClient``: its pool, its host, its credentials and headers."""

    def __init__(self, api_client: ApiClient) -> None:
        self._api = api_client
        self._host: str = api_client.configuration.host

    def open(self, method: str, path: str, *, query: Sequence[tuple[str, str]] = (), body: Any = None,
             headers: dict[str, str], timeout: tuple[float, float]) -> urllib3.BaseHTTPResponse:
        """The response of one request, its body not read yet (``.data`` or ``.stream()``; the
        caller releases the connection). Raises what urllib3 raises for a failed connection."""
        sent = {**headers, **self._api.default_headers}
        for setting in self._api.configuration.auth_settings().values():
            if setting["in"] == "header" and setting["value"]:
                sent[setting["key"]] = setting["value"]
        pool = self._api.rest_client.pool_manager
        return pool.request(
            method, url_of(self._host, path, query), body=encode_body(body), headers=sent,
            timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]), preload_content=False)


def url_of(host: str, path: str, query: Sequence[tuple[str, str]]) -> str:
    """``host`` and ``path`` with the query percent-encoded (a space as ``%20``)."""
    return f"{host}{path}?{urlencode(query, quote_via=quote)}" if query else host + path


def encode_body(body: Any) -> bytes | None:
    """A request body: a value as JSON; text or bytes as they are, already serialized by the
    caller in the request's content type (the revision record is JSON sent as YAML,
    controller/reconcile/history.py); nothing for ``None``."""
    if body is None or isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return jsoncodec.dumps(body)
