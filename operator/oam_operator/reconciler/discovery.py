"""API discovery with a bounded re-discovery rule (docs/reconciler.md#the-cluster-client).

The dynamic client's own discoverer invalidates its whole cache on every miss and shares a
cache file in the temp directory between processes; a type that is legitimately absent (a CR
whose CRD is not registered yet) would then cost a full discovery on every lookup. Here a miss
re-discovers at most once every 10 seconds per client. Because a CRD or APIService written
through this client makes new types likely, such a write opens a 30-second window in which a
miss refreshes only the group list and the group-version looked up (two requests), so types
created in the same or the next call become visible promptly without a discovery storm.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .identity import split_api_version

__all__ = ["ApiResource", "Discovery"]

REDISCOVER_INTERVAL = 10.0
TYPES_CHANGED_WINDOW = 30.0


@dataclass(frozen=True)
class ApiResource:
    """What a REST mapping yields: where a type lives and whether it is namespaced."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: tuple[str, ...]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str = "", name: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


Fetch = Callable[[str], Mapping[str, Any]]
"""GET a discovery path and return the decoded JSON (raises on failure)."""


class Discovery:
    """Lazily cached legacy discovery (``/api``, ``/apis``, one request per group-version)."""

    def __init__(self, fetch: Fetch, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.RLock()
        self._groups: dict[str, tuple[list[str], str]] | None = None  # group → (versions, preferred)
        self._resources: dict[tuple[str, str], list[ApiResource]] = {}
        self._last_refresh = -1e18
        self._types_changed_at = -1e18

    # -- cache ------------------------------------------------------------------------------

    def invalidate(self) -> None:
        with self._lock:
            self._groups = None
            self._resources.clear()
            self._last_refresh = self._clock()

    def types_changed(self) -> None:
        """Called after a CRD or APIService was written: new types may appear soon."""
        with self._lock:
            self._types_changed_at = self._clock()

    def _load_groups(self) -> dict[str, tuple[list[str], str]]:
        if self._groups is None:
            groups: dict[str, tuple[list[str], str]] = {}
            core = self._fetch("/api")
            core_versions = [str(v) for v in core.get("versions") or []]
            groups[""] = (core_versions, core_versions[0] if core_versions else "v1")
            for g in self._fetch("/apis").get("groups") or []:
                versions = [str(v["version"]) for v in g.get("versions") or []]
                preferred = (g.get("preferredVersion") or {}).get("version") or (versions[0] if versions else "")
                groups[str(g["name"])] = (versions, str(preferred))
            self._groups = groups
        return self._groups

    def _load_resources(self, group: str, version: str) -> list[ApiResource]:
        key = (group, version)
        cached = self._resources.get(key)
        if cached is None:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            body = self._fetch(path)
            cached = [
                ApiResource(
                    group=group,
                    version=version,
                    kind=str(r["kind"]),
                    plural=str(r["name"]),
                    namespaced=bool(r.get("namespaced")),
                    verbs=tuple(str(v) for v in r.get("verbs") or ()),
                )
                for r in body.get("resources") or []
                if "/" not in str(r.get("name", ""))
            ]
            self._resources[key] = cached
        return cached

    def _find(self, group: str, version: str, kind: str) -> ApiResource | None:
        versions, _ = self._load_groups().get(group, ([], ""))
        if version not in versions:
            return None
        for resource in self._load_resources(group, version):
            if resource.kind == kind:
                return resource
        return None

    def _rediscover(self, group: str, version: str) -> bool:
        """After a miss: full invalidation at most every 10 s; inside the window after a type
        change, a targeted refresh of the group list and this group-version. True if done."""
        now = self._clock()
        if now - self._last_refresh >= REDISCOVER_INTERVAL:
            self.invalidate()
            return True
        if now - self._types_changed_at <= TYPES_CHANGED_WINDOW:
            self._groups = None
            self._resources.pop((group, version), None)
            return True
        return False

    # -- public -----------------------------------------------------------------------------

    def lookup(self, api_version: str, kind: str) -> ApiResource | None:
        """The REST mapping of ``(apiVersion, kind)``, or ``None`` ("no match")."""
        group, version = split_api_version(api_version)
        with self._lock:
            found = self._find(group, version, kind)
            if found is None and self._rediscover(group, version):
                found = self._find(group, version, kind)
            return found

    def resources_for_group_version(self, group: str, version: str) -> list[ApiResource]:
        """Every resource of one group-version (subresources skipped); empty when not served."""
        with self._lock:
            versions, _ = self._load_groups().get(group, ([], ""))
            if version not in versions and self._rediscover(group, version):
                versions, _ = self._load_groups().get(group, ([], ""))
            if version not in versions:
                return []
            return list(self._load_resources(group, version))

    def server_preferred_resources(self) -> list[ApiResource]:
        """The resources of every group's preferred version; fresh (used rarely, docs/reconciler.md#deletion-checks)."""
        with self._lock:
            self.invalidate()
            out: list[ApiResource] = []
            for group, (_, preferred) in sorted(self._load_groups().items()):
                if preferred:
                    out.extend(self._load_resources(group, preferred))
            return out
