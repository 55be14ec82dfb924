"""The operator's in-memory index of Applications for ``app-dependency`` (no API reads).

Fed by the Application watch (``handlers.py`` calls ``observe`` on every event, status changes
included) and asked by the passes, which run in worker threads: hence the lock around the pure
``AppGraph``. ``observe`` returns the UIDs to wake (only dependants whose dependency appeared,
vanished or flipped readiness; see ``operatorpolicies/graph.py``), so a dependency's progress never
costs its dependants a pass.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.operatorpolicies import AppGraph, AppRef, DependencyState, node_from_object


class AppIndex:
    def __init__(self, *, allow_cross_namespace: bool = False) -> None:
        self.allow_cross_namespace = allow_cross_namespace
        self._graph = AppGraph()
        self._lock = threading.Lock()

    def observe(self, event_type: str | None, body: Mapping[str, Any]) -> set[str]:
        """Record one watch event; returns the UIDs of the Applications to wake."""
        node = node_from_object(body, allow_cross_namespace=self.allow_cross_namespace)
        with self._lock:
            if event_type == "DELETED":
                return self._graph.remove(node.ref)
            return self._graph.upsert(node)

    def states(self, deps: Sequence[AppRef]) -> list[DependencyState]:
        with self._lock:
            return self._graph.states(deps)

    def find_cycle(self, start: AppRef, deps: Sequence[AppRef]) -> list[AppRef] | None:
        with self._lock:
            return self._graph.find_cycle(start, deps)

    def blocking_dependants(self, ref: AppRef) -> list[AppRef]:
        with self._lock:
            return self._graph.blocking_dependants(ref)

    def __len__(self) -> int:
        with self._lock:
            return len(self._graph)
