"""Events on dependent objects (spec §12.2).

Written with the operator's own identity (the client's event client, never the impersonated
one). An Event is a courtesy: failing to emit one is logged at debug level and never fails a
call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .inventory import format_timestamp

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from .client import ClusterClient

__all__ = ["EventRecorder"]

log = logging.getLogger("oam_operator.reconciler")


class EventRecorder:
    """Emits core/v1 Events; a disabled recorder does nothing."""

    def __init__(self, client: ClusterClient, component: str, enabled: bool, clock: Callable[[], datetime]) -> None:
        self._client = client.event_client
        self._component = component
        self._enabled = enabled
        self._clock = clock

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
        try:
            self._client.create_event(namespace, event)
        except Exception as exc:  # an Event must never fail a call
            log.debug("failed to emit event %s on %s/%s: %s", reason, namespace, name, exc)
