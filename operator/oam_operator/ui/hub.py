"""What the UI process knows of the cluster (docs/ui.md#live-updates): the Applications feed and
the Events feed, in the user's scope, and the browsers listening for changes.

Scope: ``-n NS`` (else the context's namespace) or ``-A``. A user who may not list Applications in
all namespaces is shown that, and the namespace of their context instead; the Events feed follows
the Applications' scope and holds only Events about Applications (a field selector). Each feed
runs in a daemon thread; a change wakes the server-sent-event streams through the event loop,
coalesced so a burst of watch events is one refresh."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any

from oam_operator.cli.kubeclient import GROUP, VERSION, Connection
from oam_operator.ui.feed import Feed, FeedScope, Forbidden

__all__ = ["Hub", "Scope"]


@dataclass(frozen=True)
class Scope:
    """Where the user asked to look: one namespace, or all (``namespace`` None)."""

    namespace: str | None
    fallback: str  # the context's namespace, shown when all namespaces are forbidden


@dataclass
class Hub:
    """The feeds and the listeners of one UI process."""

    conn: Connection | None
    scope: Scope
    domain: str
    fatal: str | None = None  # the kubeconfig could not be used: nothing else can be shown
    notice: str | None = None
    apps: Feed | None = None
    events: Feed | None = None
    version: int = 0
    listeners: set[asyncio.Event] = field(default_factory=set)
    loop: asyncio.AbstractEventLoop | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the feeds' threads (nothing to start after a ``fatal`` failure)."""
        self.loop = loop
        if self.conn is None:
            return
        threading.Thread(target=self._run, name="ui-feeds", daemon=True).start()

    def _feed(self, prefix: str, plural: str, namespace: str | None, field_selector: str = "") -> Feed:
        assert self.conn is not None
        return Feed(self.conn, FeedScope(prefix, plural, namespace, field_selector), self.changed)

    def _run(self) -> None:
        apps = self._feed(f"/apis/{GROUP}/{VERSION}", "applications", self.scope.namespace)
        self.apps = apps
        version: str | None = None
        if self.scope.namespace is None:
            try:
                version = apps.list_once()
            except Forbidden as forbidden:
                self.notice = f'{forbidden.message}; showing namespace "{self.scope.fallback}" only'
                apps = self._feed(f"/apis/{GROUP}/{VERSION}", "applications", self.scope.fallback)
                self.apps = apps
            except Exception:  # the feed's own loop lists again and reports the failure
                pass
        # Only the Applications' Events: the server filters, so other Events cost neither memory nor wake-ups.
        self.events = self._feed("/api/v1", "events", apps.scope.namespace, "involvedObject.kind=Application")
        threading.Thread(target=self.events.run, args=(self.stop,), name="ui-events", daemon=True).start()
        apps.run(self.stop, version)

    def changed(self) -> None:
        """Called from a feed's thread: wake every listener on the loop."""
        if self.loop is not None and not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the process is stopping
                self.loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        self.version += 1
        for listener in self.listeners:
            listener.set()

    def applications(self) -> list[dict[str, Any]]:
        return self.apps.snapshot() if self.apps is not None else []

    def application(self, namespace: str, name: str) -> dict[str, Any] | None:
        if self.apps is None:
            return None
        with self.apps.lock:
            return self.apps.items.get(f"{namespace}/{name}")

    def state(self) -> dict[str, Any]:
        """What the page shows above every view: scope, notices and errors, whether data arrived."""
        apps, events = self.apps, self.events
        return {
            "fatal": self.fatal,
            "notice": self.notice,
            "error": apps.error if apps is not None else None,
            "eventsError": events.error if events is not None else None,
            "synced": apps is not None and apps.synced,
            "scope": (apps.scope.where if apps is not None else
                      FeedScope("", "applications", self.scope.namespace).where),
            "version": self.version,
            "requests": {"applications": apps.requests if apps else 0, "events": events.requests if events else 0},
        }
