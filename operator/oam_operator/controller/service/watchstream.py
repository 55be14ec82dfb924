"""Following a collection's watch from a resourceVersion, shared by the operator's own watches
(docs/operator.md#watches-of-owned-objects).

Every watch the operator keeps outside kopf has the same shape: LIST (or read) the collection,
then watch from the list's resourceVersion with bookmarks, request after request, until the server
sends an ``ERROR`` event (``410 Gone`` and the like), which means LIST again. Only what is done with
each event and how a failed LIST is retried differ, so those stay with the caller.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oam_operator.reconciler.client import ClusterClient

__all__ = ["OnEvent", "follow", "follow_once", "listed_version"]

log = logging.getLogger("oam_operator.controller")

WATCH_SECONDS = "300"  # the server ends each watch request after this long; the next one resumes
QUICK_END = 1.0  # a watch request that ended sooner than this is followed by a pause of as long

OnEvent = Callable[[str, Mapping[str, Any]], None]
"""Called with an event's type (``ADDED``, ``MODIFIED``, ``DELETED``) and its object."""


def listed_version(page: Mapping[str, Any]) -> str:
    """The resourceVersion a LIST answered with: where its watch starts."""
    return str((page.get("metadata") or {}).get("resourceVersion") or "")


def follow_once(client: ClusterClient, path: str, query: Sequence[tuple[str, str]], version: str,
                stopped: threading.Event, on_event: OnEvent) -> str | None:
    """Follow one watch request on ``path`` from ``version``; the version to resume from, or
    ``None`` when the server sent ``ERROR`` (the caller lists again). Bookmarks only move the version."""
    watch_query = [*query, ("resourceVersion", version), ("allowWatchBookmarks", "true"),
                   ("timeoutSeconds", WATCH_SECONDS)]
    for event in client.watch(path, query=watch_query):
        obj = event.get("object") or {}
        kind = str(event.get("type") or "")
        if kind == "ERROR":
            log.info("relisting %s after %s %s: %s", path, obj.get("code"), obj.get("reason"), obj.get("message"))
            return None
        version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            on_event(kind, obj)
        if stopped.is_set():
            break
    return version


def follow(client: ClusterClient, path: str, query: Sequence[tuple[str, str]], version: str,
           stopped: threading.Event, on_event: OnEvent) -> None:
    """Follow watch requests one after another until ``stopped`` or an ``ERROR`` event (then the
    caller lists again). A server that ends requests at once is not hammered: a request that lasted
    under a second is followed by a second's pause."""
    while not stopped.is_set():
        started = time.monotonic()
        resumed = follow_once(client, path, query, version, stopped, on_event)
        if resumed is None:
            return
        version = resumed
        if time.monotonic() - started < QUICK_END:
            stopped.wait(QUICK_END)
