"""How the operator finds the API server from inside a Pod (docs/operator.md#in-a-pod).

Kubernetes gives every Pod ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` and mounts the
ServiceAccount's token, CA and namespace under ``/var/run/secrets/kubernetes.io/serviceaccount``;
client-go and the official Python client connect to that address. kopf's own minimal login uses
the DNS name ``kubernetes.default.svc`` instead, which fails where cluster DNS does not answer
(``hostNetwork`` Pods with ``dnsPolicy: Default``, clusters without CoreDNS) and could differ from
the address the operator's reconciler client uses. So both of the operator's clients (kopf's and
the reconciler's) take the address from the environment, and both decide "in a Pod" the same way.
The token is read again at every (re-)login, so a rotated token is picked up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import kopf

TOKEN_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def in_cluster(token_dir: Path = TOKEN_DIR) -> bool:
    """A ServiceAccount token is mounted and the API server's Service address is in the environment."""
    return (token_dir / "token").exists() and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def api_server_url() -> str:
    """``https://<KUBERNETES_SERVICE_HOST>:<KUBERNETES_SERVICE_PORT>`` (IPv6 hosts in brackets)."""
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"https://{host}:{port}"


def connection_info(settings: Any, token_dir: Path = TOKEN_DIR) -> kopf.ConnectionInfo | None:
    """kopf's credentials in a Pod (module docstring), or ``None`` outside one."""
    if not in_cluster(token_dir):
        return None
    token = (token_dir / "token").read_text(encoding="utf-8").strip()
    namespace_file = token_dir / "namespace"
    namespace = namespace_file.read_text(encoding="utf-8").strip() if namespace_file.exists() else None
    ca = token_dir / "ca.crt"
    return kopf.ConnectionInfo(
        server=api_server_url(),
        ca_path=str(ca) if ca.exists() else None,
        token=token or None,
        default_namespace=namespace or None,
        trust_env=bool(getattr(getattr(settings, "networking", None), "trust_env", False)),
    )
