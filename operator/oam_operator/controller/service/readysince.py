"""Since when an Application is not Ready, from the status a pass wrote (docs/operator.md#metrics).

The per-Application gauge ``oam_operator_application_not_ready_seconds`` counts from here, and the
chart's alert OamApplicationNotReady fires when it passes the Application's timeout. The start is
the Ready condition's ``lastTransitionTime``, which moves only when the condition's status
changes — also from Unknown (Processing) to False (Error), so the metrics keep the earliest start
while the Application stays not Ready (``OperatorMetrics.track_application``); after a restart of
the operator it counts from the last such change. A suspended Application is paused on purpose
and never counts as not Ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from oam_operator.api.conditions import Reason

__all__ = ["not_ready_since"]


def not_ready_since(status: Mapping[str, Any]) -> float | None:
    """Epoch seconds since the Application is not Ready; ``None`` while it is Ready, suspended,
    or has no Ready condition with a readable ``lastTransitionTime`` yet."""
    ready = next((c for c in status.get("conditions") or [] if isinstance(c, Mapping) and c.get("type") == "Ready"),
                 None)
    if ready is None or ready.get("status") == "True" or ready.get("reason") == Reason.SUSPENDED:
        return None
    try:
        return datetime.fromisoformat(str(ready.get("lastTransitionTime"))).timestamp()
    except ValueError:
        return None
