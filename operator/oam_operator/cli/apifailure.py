"""The one-line failures of the CLI's cluster calls, shared by both HTTP paths (docs/operator.md#the-command-line).

Kept apart from ``kubeclient`` so the standard-library path of ``status`` (``plainkube``) can
raise and word the same failures without importing the Kubernetes client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["GROUP", "PLURAL", "TRANSIENT_CODES", "VERSION", "ApiFailure", "describe_http_error"]

GROUP, VERSION, PLURAL = "oam-operator.dev", "v1alpha1", "applications"
TRANSIENT_CODES = frozenset({429, 500, 502, 503, 504})


class ApiFailure(Exception):
    """A failure of a cluster call, as the one-line message the user sees."""

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


def _server_status(body: str | None) -> Mapping[str, Any]:
    try:
        parsed = json.loads(body or "")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, Mapping) else {}


def describe_http_error(code: int, reason: str | None, body: str | None, action: str, namespace: str,
                        name: str) -> ApiFailure:
    """The :class:`ApiFailure` for an HTTP error answer to a call on Application ``namespace/name``."""
    status = _server_status(body)
    if code == 404:
        details = status.get("details") if isinstance(status.get("details"), Mapping) else {}
        if details and details.get("name") == name:
            return ApiFailure(f'application "{name}" not found in namespace "{namespace}"')
        return ApiFailure(
            f"the server does not serve {PLURAL}.{GROUP}/{VERSION} (are the oam-operator CRDs installed? "
            "oam-operator crd | kubectl apply --server-side -f -)"
        )
    message = status.get("message") or (body or "").strip() or ""
    text = f'{action} application "{name}" in namespace "{namespace}": {code} {reason or ""}'.rstrip()
    return ApiFailure(f"{text}: {message}" if message else text, transient=code in TRANSIENT_CODES)
