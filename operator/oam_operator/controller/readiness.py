"""Readiness wake-ups: a pass waiting for a workload runs again when the workload is ready
(docs/operator.md#readiness-wake-ups).

A pass that ends waiting for a Deployment used to come back after the Processing backoff
(50 ms, 100 ms, … then every second): most of those passes found it still progressing, and
each cost the reads of every object of the wave. With 1,000 Applications that was a third of
all requests. Instead one watch per workload kind (``WATCHED``), with the operator's own
identity and the selector "has our owner label", streams the changes of the objects the
operator wrote; an event whose object the status analyzer no longer finds ``InProgress`` (or
a deletion) wakes the Application whose owner annotation it carries. A pass whose every
pending object is either of a watched kind or of a kind that is Ready as soon as it is read
(``INSTANT``) then waits up to ``WATCHED_WAIT`` for that wake-up instead of the backoff.

The watch keeps no cache: each event is analysed and dropped. It reads nothing on a tenant's
behalf: it only decides *when* the Application's own pass, with its own identity, reads again.
Where the operator may not watch a kind (403: the chart's ``leastPrivilege`` RBAC) that kind
stays unwatched and passes waiting for it keep the backoff; while a watch is down, its kind
counts as unwatched too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.status import DefaultStatusAnalyzer, StatusAnalysisError, always_ready_kinds

__all__ = ["INSTANT", "WATCHED", "WATCHED_WAIT", "ReadinessWatch", "WatchedKind", "waits_for_wake_up"]

log = logging.getLogger("oam_operator.controller")


@dataclass(frozen=True)
class WatchedKind:
    group: str
    version: str
    plural: str
    kind: str

    def path(self, namespace: str) -> str:
        where = f"/namespaces/{namespace}" if namespace else ""
        return f"/apis/{self.group}/{self.version}{where}/{self.plural}"


#: The workload kinds whose readiness a controller reports some time after they are written.
WATCHED = (
    WatchedKind("apps", "v1", "deployments", "Deployment"),
    WatchedKind("apps", "v1", "statefulsets", "StatefulSet"),
    WatchedKind("apps", "v1", "daemonsets", "DaemonSet"),
    WatchedKind("batch", "v1", "jobs", "Job"),
)

#: (group, kind) the status analyzer reports Current whenever they exist
#: (docs/reconciler.md#kstatus-rules): a pending one is Ready at the next read, so it needs no wake-up.
INSTANT = always_ready_kinds()

#: The longest a pass waiting only for watched objects sleeps without a wake-up: the bound on
#: the delay when an event is missed (a watch reconnecting), not the usual one.
WATCHED_WAIT = 5.0

_RETRY = 5.0  # seconds before a failed watch starts again


def waits_for_wake_up(pending: Iterable[tuple[str, str]], watched: Callable[[str, str], bool]) -> bool:
    """Whether a pass pending on objects of these (group, kind) may wait for a wake-up: at
    least one is watched, and every other one is Ready as soon as it is read."""
    any_watched = False
    for group, kind in pending:
        if watched(group, kind):
            any_watched = True
        elif (group, kind) not in INSTANT:
            return False
    return any_watched


class ReadinessWatch:
    """One watch thread per watched kind and namespace scope; ``on_ready(namespace, name)`` is
    called (in that thread) for the Application that owns an object that became ready."""

    def __init__(
        self,
        client: ClusterClient,
        *,
        domain: str,
        cluster_id: str,
        namespaces: Sequence[str],
        on_ready: Callable[[str, str], None],
        kinds: Sequence[WatchedKind] = WATCHED,
    ) -> None:
        self.client = client
        self.owner_key = f"{domain}/owner-id"
        self.cluster_id = cluster_id
        self.scopes = tuple(namespaces) or ("",)
        self.on_ready = on_ready
        self.kinds = tuple(kinds)
        self.analyzer = DefaultStatusAnalyzer(domain)
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._live: dict[tuple[str, str], set[str]] = {}  # (group, kind) -> scopes being watched
        self._threads: list[threading.Thread] = []

    # -- what passes ask --------------------------------------------------------------------

    def watched(self, group: str, kind: str) -> bool:
        """Whether every scope of this kind is being watched right now."""
        with self._lock:
            return len(self._live.get((group, kind), ())) == len(self.scopes)

    # -- events -----------------------------------------------------------------------------

    def handle(self, event: Mapping[str, Any]) -> None:
        """Wake the owner of an event's object when the object is no longer progressing."""
        obj = event.get("object")
        if not isinstance(obj, Mapping):
            return
        meta = obj.get("metadata") or {}
        owner = (meta.get("annotations") or {}).get(self.owner_key)
        if not isinstance(owner, str):
            return
        cluster, _, rest = owner.partition("/")
        namespace, _, name = rest.partition("/")
        if cluster != self.cluster_id or not namespace or not name:
            return
        if event.get("type") != "DELETED":
            try:
                if self.analyzer.compute(obj).status == "InProgress":
                    return
            except StatusAnalysisError:
                pass  # the pass reports it
        self.on_ready(namespace, name)

    # -- threads ----------------------------------------------------------------------------

    def start(self) -> None:
        for kind in self.kinds:
            for scope in self.scopes:
                thread = threading.Thread(target=self._run, args=(kind, scope), daemon=True,
                                          name=f"readiness-{kind.plural}-{scope or 'all'}")
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        self._stopped.set()

    def _mark(self, kind: WatchedKind, scope: str, live: bool) -> None:
        with self._lock:
            scopes = self._live.setdefault((kind.group, kind.kind), set())
            if live:
                scopes.add(scope)
            else:
                scopes.discard(scope)

    def _run(self, kind: WatchedKind, scope: str) -> None:
        path = kind.path(scope)
        selector = ("labelSelector", self.owner_key)
        while not self._stopped.is_set():
            try:
                listed = self.client.request("list", "GET", path, query=[selector, ("limit", "1")], background=True)
                version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
                self._mark(kind, scope, True)
                self._follow(path, selector, version)
                continue  # the server asked for a new LIST (410 Gone)
            except ApiError as error:
                self._mark(kind, scope, False)
                if error.status in (403, 404):
                    log.info("not watching %s for readiness (%s): waiting passes use the backoff", path, error)
                    return
                log.debug("readiness watch of %s ended: %s", path, error)
            except Exception:  # a bug must not end the operator; the kind is polled meanwhile
                self._mark(kind, scope, False)
                log.exception("readiness watch of %s failed", path)
            self._stopped.wait(_RETRY)

    def _follow(self, path: str, selector: tuple[str, str], version: str) -> str:
        """Follow the watch from ``version`` until it must be started again from a LIST."""
        while not self._stopped.is_set():
            started = time.monotonic()
            query = [selector, ("resourceVersion", version), ("allowWatchBookmarks", "true"),
                     ("timeoutSeconds", "300")]
            for event in self.client.watch(path, query=query):
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    return version  # 410 Gone and the like: LIST again
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") != "BOOKMARK":
                    self.handle(event)
                if self._stopped.is_set():
                    break
            if time.monotonic() - started < 1.0:
                self._stopped.wait(1.0)  # a server that ends watches at once is not hammered
        return version
