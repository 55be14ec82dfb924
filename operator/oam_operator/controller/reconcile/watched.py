"""What a pass knows of the watches of owned objects (docs/operator.md#watches-of-owned-objects).

The watches themselves (``ownedwatch.py``) are machinery that outlives a pass; a pass sees
them only through these types: an owned object's key, a watched kind, the drift found on an
object, and the ``WatchedObjects`` protocol a remote cluster's watches are handed to a pass as.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from oam_operator.reconciler.cachedreads import CachedReads
from oam_operator.reconciler.inventory import InventoryItem

__all__ = ["Drift", "ObjectKey", "WatchedKind", "WatchedObjects"]

ObjectKey = tuple[str, str, str, str]
"""(group, kind, namespace, name) of an owned object."""


@dataclass(frozen=True)
class WatchedKind:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str) -> str:
        where = f"/namespaces/{namespace}" if namespace and self.namespaced else ""
        base = f"/apis/{self.api_version}" if self.group else f"/api/{self.version}"
        return f"{base}{where}/{self.plural}"


@dataclass(frozen=True)
class Drift:
    """What another manager took from an owned object: the field paths, or the whole object;
    ``completed``: it was deleted after it ran to completion (docs/operator.md#finished-jobs)."""

    paths: tuple[str, ...] = ()
    deleted: bool = False
    completed: bool = False


class WatchedObjects(CachedReads, Protocol):
    """The watches of one cluster's owned objects as a pass uses them (``ownedwatch.OwnedObjects``)."""

    def ensure(self, items: Iterable[InventoryItem]) -> None: ...
    def watched(self, group: str, kind: str) -> bool: ...
    def written(self, obj: Mapping[str, Any]) -> None: ...
    def drift(self, group: str, kind: str, namespace: str, name: str) -> Drift | None: ...
    def unverified_drift(self, group: str, kind: str, namespace: str, name: str,
                         desired: Mapping[str, Any]) -> Drift | None: ...
    def retain(self, owner: tuple[str, str], keys: Iterable[ObjectKey]) -> None: ...
