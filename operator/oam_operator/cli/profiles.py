"""The ClusterProfile a name means, as the operator resolves it: its own kind first, else the
standard kind in the inventory namespaces (docs/multicluster.md#the-standard-cluster-inventory).

The CLI reads with the user's credentials, one GET per kind (per inventory namespace, in the
order ``--inventory-namespaces`` lists them) for one name, one LIST per kind (per namespace) for
a fleet's selection; which name wins is ``controller/reconcile/inventory.py``'s ``merged``, the
operator's own rule. The inventory namespaces are the operator's setting: ``--inventory-namespaces``,
else its environment variable, which the operator reads too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.controller.reconcile.inventory import GROUP, VERSION, merged, typed
from oam_operator.controller.reconcile.settings import Settings, env_var
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

__all__ = ["ACCESS_PROVIDER_ENV", "INVENTORY_NAMESPACES_ENV", "ProfileReader", "access_provider",
           "inventory_namespaces"]

INVENTORY_NAMESPACES_ENV = env_var("inventory_namespaces")
ACCESS_PROVIDER_ENV = env_var("inventory_access_provider")
_OWN = "/apis/oam-operator.dev/v1alpha1/clusterprofiles"


def inventory_namespaces(value: str | Sequence[str] | None = None) -> tuple[str, ...]:
    """The inventory namespaces: ``value`` (``NS,...``), ``None``: the environment variable's."""
    if value is None:
        value = os.environ.get(INVENTORY_NAMESPACES_ENV, "")
    items = value.split(",") if isinstance(value, str) else list(value)
    result: list[str] = []
    for item in (str(item).strip() for item in items):
        if item and item not in result:
            result.append(item)
    return tuple(result)


def access_provider() -> str:
    """The access provider the operator connects through: its environment variable, else its default."""
    return os.environ.get(ACCESS_PROVIDER_ENV, "").strip() or Settings.model_fields[
        "inventory_access_provider"].default


def _standard(namespace: str) -> str:
    return f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/clusterprofiles"


class ProfileReader:
    """Both kinds of ClusterProfile, read with the user's client; a 404 (no such profile, no CRD)
    is none, any other error is raised (``ApiError``)."""

    def __init__(self, client: ClusterClient, namespaces: Sequence[str]) -> None:
        self.client = client
        self.namespaces = tuple(namespaces)

    def get(self, name: str) -> dict[str, Any] | None:
        """The profile ``name`` means, ``None`` when neither kind holds it."""
        found = self._read(f"{_OWN}/{name}")
        if found is not None:
            return found
        for namespace in self.namespaces:  # the first namespace holding the name
            found = self._read(f"{_standard(namespace)}/{name}")
            if found is not None:
                return dict(typed(found))
        return None

    def all(self) -> dict[str, Mapping[str, Any]]:
        """Every profile by name, both kinds (one LIST of ours, one per inventory namespace)."""
        own = {str(p["metadata"]["name"]): p for p in self._list(_OWN)}
        standard = {(namespace, str(p["metadata"]["name"])): typed(p)
                    for namespace in self.namespaces for p in self._list(_standard(namespace))}
        return merged(own, standard, self.namespaces)[0]

    def _read(self, path: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self.client.request("read", "GET", path)
        except ApiError as error:
            if error.status != 404:
                raise
            return None
        return found

    def _list(self, path: str) -> list[dict[str, Any]]:
        try:
            return list(self.client.request("list", "GET", path).get("items") or ())
        except ApiError as error:
            if error.status != 404:
                raise
            return []
