"""Operation counters (docs/reconciler.md#operation-counters). Optional: prometheus-client is only needed to export
them.

Each counter is anything with ``inc()``; the operator wires them to
``oam_operator_operations_total{action}``. HTTP-level accounting lives in the client seam.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ACTIONS", "Counter", "ReconcilerMetrics", "prometheus_metrics"]

ACTIONS = ("read", "list", "create", "update", "delete", "orphan")


class Counter(Protocol):
    def inc(self) -> None: ...


@dataclass(frozen=True)
class ReconcilerMetrics:
    """Optional counters, each incremented when its operation starts, successful or not."""

    read: Counter | None = None
    list: Counter | None = None
    create: Counter | None = None
    update: Counter | None = None
    delete: Counter | None = None
    orphan: Counter | None = None

    def inc(self, action: str) -> None:
        counter: Counter | None = getattr(self, action, None)
        if counter is not None:
            counter.inc()


def prometheus_metrics(counter: Any) -> ReconcilerMetrics:
    """Bind a prometheus-client ``Counter`` with an ``action`` label to every action."""
    return ReconcilerMetrics(**{action: counter.labels(action=action) for action in ACTIONS})
