"""Events on dependent objects (docs/reconciler.md#events-on-dependent-objects).

Written with the operator's own identity (the client's event client, never the impersonated
one). An Event is a courtesy: failing to emit one is logged at debug level and never fails a
call.

Events do not slow a call down. ``EventRecorder.emit()`` builds the complete Event at once
(timestamps, the involved object's uid and resourceVersion: the same body a synchronous POST
would send) and keeps it; when the call ends, ``flush()`` hands the call's Events to the event
client's ``EventSender``, which posts them in the background, in emission order, one at a time
on the shared pool, each through the rate limiter as a background request (it yields to every
request waiting for a token). This is safe because nothing in a call depends on an Event:
results, messages and the inventory are the same whether it was posted, is still queued or
failed, and an Event's own timestamps, not its arrival, order it for readers. ``flush_events()``
on the client waits for the queue (tests, shutdown); ``ClusterClient.close()`` does so too, and
a pool that was shut down makes the sender post in the caller's thread instead.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .inventory import format_timestamp

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from .client import ClusterClient

__all__ = ["EventRecorder", "EventSender"]

log = logging.getLogger("oam_operator.reconciler")

QueuedEvent = tuple[str, Mapping[str, Any]]


class EventSender:
    """A client's background Event queue, drained by one task at a time on the client's shared
    pool: it posts one Event and queues itself again behind whatever was submitted meanwhile,
    so Events never occupy more than one worker and never hold one while a wave's tasks wait."""

    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._queue: deque[QueuedEvent] = deque()
        self._cond = threading.Condition()
        self._draining = False

    @property
    def pending(self) -> int:
        """Events queued or being posted."""
        with self._cond:
            return len(self._queue) + (1 if self._draining else 0)

    def submit(self, events: Sequence[QueuedEvent]) -> None:
        with self._cond:
            self._queue.extend(events)
            if self._draining or not self._queue:
                return
            self._draining = True
        try:
            self._client.executor.submit(self._drain)
        except RuntimeError:  # the pool was shut down (process exit): post them here
            self._drain()

    def _drain(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._draining = False
                    self._cond.notify_all()
                    return
                namespace, event = self._queue.popleft()
            try:
                self._client.create_event(namespace, event, background=True)
            except Exception as exc:  # an Event must never fail anything
                meta = event.get("involvedObject") or {}
                log.debug("failed to emit event %s on %s/%s: %s", event.get("reason"), namespace, meta.get("name"), exc)
            try:
                self._client.executor.submit(self._drain)  # the next one, behind queued work
                return
            except RuntimeError:  # the pool was shut down: go on in this thread
                continue

    def wait(self, timeout: float | None = None) -> bool:
        """Until the queue is empty and nothing is being posted; ``False`` on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._draining and not self._queue, timeout)


class EventRecorder:
    """Collects one call's core/v1 Events; ``flush()`` queues them for posting. A disabled
    recorder does nothing."""

    def __init__(self, client: ClusterClient, component: str, enabled: bool, clock: Callable[[], datetime]) -> None:
        self._client = client.event_client
        self._component = component
        self._enabled = enabled
        self._clock = clock
        self._lock = threading.Lock()
        self._events: list[QueuedEvent] = []

    def emit(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        if not self._enabled:
            return
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name") or "")
        namespace = str(metadata.get("namespace") or "") or "default"
        now = format_timestamp(self._clock())
        involved = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": name,
            "uid": metadata.get("uid"),
            "resourceVersion": metadata.get("resourceVersion"),
        }
        if metadata.get("namespace"):
            involved["namespace"] = metadata["namespace"]
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": namespace},
            "involvedObject": {k: v for k, v in involved.items() if v is not None},
            "type": event_type,
            "reason": reason,
            "message": message,
            "source": {"component": self._component},
            "reportingComponent": self._component,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        with self._lock:
            self._events.append((namespace, event))

    def flush(self) -> None:
        """Queue the collected Events on the event client (the end of a call); never raises."""
        with self._lock:
            events, self._events = self._events, []
        if not events:
            return
        try:
            self._client.send_events(events)
        except Exception as exc:  # an Event must never fail a call
            log.debug("failed to queue %d events: %s", len(events), exc)
