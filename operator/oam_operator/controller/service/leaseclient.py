"""The Lease API of leader election over the cluster client (docs/operator.md#leader-election).

Its own ``ClusterClient``, not the passes': no client-side rate limit (a renewal must never wait
behind a burst of passes for a token), its own connection pool, and request timeouts within the
renew deadline, so one hung request cannot outlast it. It is counted in
``oam_operator_api_requests_total`` like every other request, but feeds no adaptive limit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

__all__ = ["ClusterLeaseApi", "lease_path"]

API = "/apis/coordination.k8s.io/v1"


def lease_path(namespace: str, name: str = "") -> str:
    base = f"{API}/namespaces/{namespace}/leases"
    return f"{base}/{name}" if name else base


class ClusterLeaseApi:
    """``leaderelection.LeaseApi`` for the Lease ``namespace/name``."""

    def __init__(self, client: ClusterClient, namespace: str, name: str) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name

    def get(self) -> dict[str, Any] | None:
        try:
            lease: dict[str, Any] = self.client.request("get", "GET", lease_path(self.namespace, self.name))
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return lease

    def create(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": dict(spec)}
        created: dict[str, Any] = self.client.request("create", "POST", lease_path(self.namespace), body=body)
        return created

    def update(self, spec: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace, "resourceVersion": resource_version},
                "spec": dict(spec)}
        updated: dict[str, Any] = self.client.request("update", "PUT", lease_path(self.namespace, self.name),
                                                      body=body)
        return updated

    def watch(self, resource_version: str, timeout: float) -> Iterator[dict[str, Any]]:
        """The Lease as each watch event shows it (a deleted one as ``{}``), until the server ends the watch."""
        query = [("fieldSelector", f"metadata.name={self.name}"), ("timeoutSeconds", str(int(timeout)))]
        if resource_version:
            query.append(("resourceVersion", resource_version))
        for event in self.client.watch(lease_path(self.namespace), query=query, timeout=timeout + 5):
            kind = event.get("type")
            if kind == "ERROR":
                return  # 410 Gone and the like: the caller reads the Lease again
            obj = event.get("object") or {}
            yield {} if kind == "DELETED" else obj
