"""A granted permission is picked up at once (docs/operator.md#not-permitted-and-the-role-it-needs).

An Application refused with ``NotPermitted`` is retried on the error backoff (5 s doubling, up
to its interval); without this watch it would wait out that backoff after the namespace's
owner grants the Role. This watch follows Roles and RoleBindings (with the operator's
identity, cluster-wide or in the watched namespaces) and tells ``on_grant`` the namespace of
each change; the runtime wakes that namespace's Applications whose last passes ended in a 403.
Only changes after the start are news: the first LIST gives the resourceVersion to watch
from, and a watch that ends or fails lists again. A kind the operator may not list or watch
(403) is logged once and left: the error backoff still finds the grant.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

from .watchstream import follow_once

__all__ = ["GRANT_KINDS", "GrantWatch"]

log = logging.getLogger("oam_operator.controller")

GRANT_KINDS = ("rolebindings", "roles")
_BASE = "/apis/rbac.authorization.k8s.io/v1"
_RETRY = 5.0  # seconds before a failed watch starts again


class GrantWatch:
    def __init__(self, client: ClusterClient, namespaces: Sequence[str], on_grant: Callable[[str], None],
                 where: str = "") -> None:
        self.client = client
        self.where = f" on {where}" if where else ""  # a remote cluster, in the log
        self.scopes = tuple(namespaces) or ("",)
        self.on_grant = on_grant
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for plural in GRANT_KINDS:
            for scope in self.scopes:
                where = f"/namespaces/{scope}" if scope else ""
                thread = threading.Thread(target=self._run, args=(f"{_BASE}{where}/{plural}",), daemon=True,
                                          name=f"oam-grants-{plural}")
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        self._stopped.set()

    def _run(self, path: str) -> None:
        version = ""
        while not self._stopped.is_set():
            try:
                if not version:
                    listed = self.client.request("read", "GET", path, query=[("limit", "1")])
                    version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
                started = time.monotonic()
                version = self._follow(path, version)
                if time.monotonic() - started < 1.0:
                    self._stopped.wait(1.0)  # a server that ends watches at once is not hammered
            except ApiError as error:
                if error.status == 403:
                    log.warning("not permitted to watch %s%s: a granted permission is found at the error backoff "
                                "(%s)", path, self.where, error)
                    return
                log.info("the watch of %s failed (%s); starting again", path, error)
                version = ""
                self._stopped.wait(_RETRY)

    def _follow(self, path: str, version: str) -> str:
        """Follow one watch request from ``version``; the version to go on from, ``""`` to list again."""
        resumed = follow_once(self.client, path, [], version, self._stopped, self._granted)
        return "" if resumed is None else resumed

    def _granted(self, type_: str, obj: Mapping[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace:
            self.on_grant(str(namespace))
