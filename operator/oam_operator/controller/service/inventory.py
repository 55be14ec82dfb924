"""The watches of the standard cluster inventory (docs/multicluster.md#the-standard-cluster-inventory).

The ``multicluster.x-k8s.io`` ClusterProfiles of the namespaces ``--inventory-namespaces`` lists
are kept by one watch per namespace, with the operator's identity: the chart grants ``get``,
``list`` and ``watch`` of them in exactly those namespaces, so this is not a kopf handler (kopf
watches every kind in the operator's namespaces, cluster-wide by default). Without the setting
nothing is watched. The operator never writes them: the cluster manager owns them.

Each change calls ``on_change`` with the profile before and after, so the runtime wakes the
Applications it concerns. A namespace whose LIST fails for long (the CRD not installed: 404; no
grant: 403) is logged once per kind of failure and tried again every 30 s; any other failure (429
while a new CRD's storage starts, a server error) is tried again after 5 s.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

from ..reconcile.inventory import GROUP, RESOURCE, VERSION, typed
from .watchstream import follow, listed_version

__all__ = ["StandardProfiles"]

log = logging.getLogger("oam_operator.controller")

_RETRY = 5.0  # seconds before a watch that ended lists again
_RETRY_FAILED = 30.0  # seconds before a LIST that failed (no CRD, no grant) is tried again
_NOT_THERE = (403, 404)  # no grant, no CRD: for long; any other failure passes

Key = tuple[str, str]
"""(namespace, name) of a standard ClusterProfile."""
OnChange = Callable[[Key, Mapping[str, Any] | None, Mapping[str, Any] | None], None]


class StandardProfiles:
    """The standard ClusterProfiles of the inventory namespaces, one watch per namespace; thread-safe."""

    def __init__(self, client: ClusterClient, namespaces: Sequence[str], on_change: OnChange | None = None) -> None:
        self.client = client
        self.namespaces = tuple(namespaces)
        self.on_change = on_change
        self._profiles: dict[Key, Mapping[str, Any]] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for namespace in self.namespaces:
            thread = threading.Thread(target=self._run, args=(namespace,), daemon=True,
                                      name=f"inventory-watch-{namespace}")
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def get(self, key: Key) -> Mapping[str, Any] | None:
        """The standard profile ``key`` as last watched, ``None``: none."""
        with self._lock:
            return self._profiles.get(key)

    def profiles(self) -> dict[Key, Mapping[str, Any]]:
        """Every standard profile as last watched."""
        with self._lock:
            return dict(self._profiles)

    # -- threads ------------------------------------------------------------------------------------

    def _run(self, namespace: str) -> None:
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/clusterprofiles"
        failed = 0
        while not self._stopped.is_set():
            wait = _RETRY
            try:
                page = self.client.request("list", "GET", path, background=True)
                if failed:
                    log.info("reading %s in namespace %s", RESOURCE, namespace)
                failed = 0
                self._replace(namespace, page.get("items") or [])
                self._follow(namespace, path, listed_version(page))
            except ApiError as error:
                if error.status not in _NOT_THERE:  # 429 while a new CRD's storage starts, 5xx, a lost connection
                    log.info("listing %s in namespace %s failed (%s): retrying in %ds", RESOURCE, namespace, error,
                             int(_RETRY))
                else:
                    if error.status != failed:
                        log.warning("cannot read %s in namespace %s (%s): retrying every %ds", RESOURCE, namespace,
                                    error, int(_RETRY_FAILED))
                    failed, wait = error.status or -1, _RETRY_FAILED
            except Exception:  # a bug must not end the operator
                log.exception("watch of %s in namespace %s failed", RESOURCE, namespace)
            self._stopped.wait(wait)

    def _follow(self, namespace: str, path: str, version: str) -> None:
        def on_event(type_: str, obj: Mapping[str, Any]) -> None:
            key = (namespace, str((obj.get("metadata") or {}).get("name") or ""))
            self._store(key, None if type_ == "DELETED" else obj)

        follow(self.client, path, [], version, self._stopped, on_event)

    def _replace(self, namespace: str, items: list[Mapping[str, Any]]) -> None:
        """A LIST of ``namespace``: what it holds now, and the profiles gone since the last one."""
        listed = {(namespace, str((item.get("metadata") or {}).get("name") or "")): item for item in items}
        with self._lock:
            gone = [key for key in self._profiles if key[0] == namespace and key not in listed]
        for key in gone:
            self._store(key, None)
        for key, item in listed.items():
            self._store(key, item)

    def _store(self, key: Key, profile: Mapping[str, Any] | None) -> None:
        with self._lock:
            old = self._profiles.get(key)
            if profile is None:
                self._profiles.pop(key, None)
            else:
                self._profiles[key] = typed(profile)
        if _version(old) != _version(profile) and self.on_change is not None:
            self.on_change(key, old, None if profile is None else typed(profile))


def _version(profile: Mapping[str, Any] | None) -> tuple[str, str]:
    meta = (profile or {}).get("metadata") or {}
    return str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
