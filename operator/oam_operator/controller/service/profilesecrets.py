"""The kubeconfig Secrets of ClusterProfiles, kept by watches (docs/multicluster.md#secret-watches).

A pass of a remote Application needs its profile's Secret; reading it from the hub on every
pass cost each Application a GET per pass, so a no-op pass was not free. Instead, the first
use of a Secret starts one watch of that Secret alone (``fieldSelector=metadata.name=...``,
with the operator's identity: the chart's Role on exactly the named Secrets allows it), and
passes read its copy. Only Secrets a profile names are held, never the others of the
namespace. An event that changes a Secret (a rotation, a deletion, its creation) calls
``on_change`` so the Applications using it are woken at once.

Until a Secret's watch has listed it, and when the watch may not run (403: an older Role
granting ``get`` only), ``secret`` reads it with a GET as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

from .watchstream import follow, listed_version

__all__ = ["SecretWatches"]

log = logging.getLogger("oam_operator.controller")

_RETRY = 5.0  # seconds before a failed watch starts again

SecretName = tuple[str, str]
"""(namespace, name) of a Secret."""


@dataclass
class _Watched:
    synced: bool = False  # the watch follows it now
    known: bool = False  # the watch has listed it at least once (a relist after a gap compares)
    forbidden: bool = False
    secret: Mapping[str, Any] | None = None  # ``None``: it does not exist
    thread: threading.Thread | None = field(default=None, repr=False)


class SecretWatches:
    """One watch per kubeconfig Secret in use; thread-safe."""

    def __init__(self, client: ClusterClient, on_change: Callable[[str, str], None] | None = None) -> None:
        self.client = client
        self.on_change = on_change
        self._watched: dict[SecretName, _Watched] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def secret(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The Secret as the watch last saw it (``None``: it does not exist); until the watch has
        listed it, or when it may not watch, read with a GET. ``ApiError`` as the GET raises it."""
        key = (namespace, name)
        with self._lock:
            watched = self._watched.get(key)
            if watched is None:
                watched = self._watched[key] = _Watched()
                if not self._stopped.is_set():
                    watched.thread = threading.Thread(target=self._run, args=(key,), daemon=True,
                                                      name=f"secret-watch-{namespace}/{name}")
                    watched.thread.start()
            elif watched.synced:
                return watched.secret
        try:
            found: Mapping[str, Any] = self.client.request(
                "read", "GET", f"/api/v1/namespaces/{namespace}/secrets/{name}")
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return found

    def watching(self) -> int:
        """How many Secrets are watched and synced."""
        with self._lock:
            return sum(1 for watched in self._watched.values() if watched.synced)

    def stop(self) -> None:
        self._stopped.set()

    # -- threads ------------------------------------------------------------------------------------

    def _run(self, key: SecretName) -> None:
        namespace, name = key
        path = f"/api/v1/namespaces/{namespace}/secrets"
        selector = ("fieldSelector", f"metadata.name={name}")
        while not self._stopped.is_set():
            try:
                page = self.client.request("list", "GET", path, query=[selector], background=True)
                items = page.get("items") or []
                self._store(key, items[0] if items else None)
                self._follow(key, path, selector, listed_version(page))
            except ApiError as error:
                if error.status == 403:
                    with self._lock:
                        self._watched[key].forbidden = True
                    log.info("not watching the kubeconfig Secret %s/%s (%s): it is read on every pass",
                             namespace, name, error)
                    return
                log.debug("watch of the kubeconfig Secret %s/%s ended: %s", namespace, name, error)
            except Exception:  # a bug must not end the operator; passes read the Secret meanwhile
                log.exception("watch of the kubeconfig Secret %s/%s failed", namespace, name)
            with self._lock:
                self._watched[key].synced = False
            self._stopped.wait(_RETRY)

    def _follow(self, key: SecretName, path: str, selector: tuple[str, str], version: str) -> None:
        follow(self.client, path, [selector], version, self._stopped,
               lambda type_, obj: self._store(key, None if type_ == "DELETED" else obj))

    def _store(self, key: SecretName, secret: Mapping[str, Any] | None) -> None:
        """Keep what the watch saw; tell ``on_change`` when it is not what passes read before."""
        with self._lock:
            watched = self._watched[key]
            changed = watched.known and _version(watched.secret) != _version(secret)
            watched.secret, watched.synced, watched.known = secret, True, True
        if changed and self.on_change is not None:
            self.on_change(*key)


def _version(secret: Mapping[str, Any] | None) -> tuple[str, str]:
    meta = (secret or {}).get("metadata") or {}
    return str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
