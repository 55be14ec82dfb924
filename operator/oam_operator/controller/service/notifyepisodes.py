"""Episodes from an Application's status (docs/notifications.md#exactly-once-per-episode).

A message is decided by comparing what the Application's status says now with what the
Notification's status says was told, never by counting passes or watch events: a retry that
writes the same status, a second watch event, or a new leader reading both again decides
nothing new. ``step`` is that comparison for one (Notification, Application) pair; it returns
the entry to store (with the messages now owed appended to its ``pending``), or ``None`` when
the entry is to be dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Observed", "failing", "observe", "selects", "step"]

#: Pending reasons that mean the revision cannot be applied (retried), not that it is under way.
FAILING_PENDING_REASONS = frozenset({"Retrying", "Timeout"})


@dataclass(frozen=True)
class Observed:
    """What an Application's status says, as far as notifications care."""

    uid: str
    state: str
    reason: str
    message: str
    rolled_back: int | None
    rolled_back_message: str
    drift_message: str | None  # None: not drifted


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return None


def observe(app: Mapping[str, Any]) -> Observed:
    """The parts of ``app`` (a plain body) that episodes are derived from."""
    status = app.get("status") or {}
    ready = _condition(status, "Ready") or {}
    drifted = _condition(status, "Drifted")
    rolled = status.get("rolledBack") or {}
    revision = rolled.get("revision")
    return Observed(
        uid=str((app.get("metadata") or {}).get("uid") or ""),
        state=str(status.get("state") or ""),
        reason=str(ready.get("reason") or ""),
        message=str(ready.get("message") or ""),
        rolled_back=int(revision) if isinstance(revision, int) else None,
        rolled_back_message=str(rolled.get("message") or ""),
        drift_message=str(drifted.get("message") or "") if drifted and drifted.get("status") == "True" else None,
    )


def failing(observed: Observed) -> bool:
    """In a failure episode: Error, or Pending because the revision is retried or timed out."""
    return observed.state == "Error" or (observed.state == "Pending" and observed.reason in FAILING_PENDING_REASONS)


def selects(spec: Mapping[str, Any], app: Mapping[str, Any]) -> bool:
    """Whether the Notification's ``applications`` and ``selector`` both take ``app``."""
    meta = app.get("metadata") or {}
    names = spec.get("applications")
    if names and meta.get("name") not in names:
        return False
    labels = meta.get("labels") or {}
    return all(labels.get(key) == value for key, value in (spec.get("selector") or {}).items())


def _message(event: str, entry: Mapping[str, Any], ident: str, text: str, now: str) -> dict[str, Any]:
    return {"id": f"{entry['uid']}.{event}.{ident}", "event": event, "message": text, "at": now}


def step(entry: Mapping[str, Any] | None, app: Mapping[str, Any] | None, *, namespace: str, name: str,
         events: Collection[str], now: str) -> dict[str, Any] | None:
    """The new entry of Application ``name`` (``app`` ``None``: it is gone), owed messages appended.

    Only kinds in ``events`` are owed; the others still move the episode, so a kind added later
    is not told about the past.
    """
    label = f"Application {namespace}/{name}"
    if app is None:
        if entry is None:
            return None
        gone = dict(entry)
        if not gone.get("deleted"):
            gone["deleted"] = True
            if "deleted" in events:
                told = _message("deleted", gone, now, f"{label} was deleted", now)
                gone["pending"] = [*(gone.get("pending") or []), told]
        return gone if gone.get("pending") else None
    observed = observe(app)
    new: dict[str, Any] = dict(entry) if entry is not None else {"name": name, "uid": observed.uid}
    owed: list[dict[str, Any]] = []
    if failing(observed) and not new.get("failing"):
        new["failing"], new["episodes"] = True, int(new.get("episodes") or 0) + 1
        if "failed" in events:
            owed.append(_message("failed", new, str(new["episodes"]), f"{label} failed: {observed.message}", now))
    elif observed.state == "Ready" and new.get("failing"):
        new["failing"] = False
        if "recovered" in events:
            owed.append(_message("recovered", new, str(new.get("episodes") or 0),
                                 f"{label} recovered: {observed.message}", now))
    if observed.rolled_back is not None and observed.rolled_back != new.get("rolledBack"):
        new["rolledBack"] = observed.rolled_back
        if "rolledBack" in events:
            owed.append(_message("rolledBack", new, str(observed.rolled_back),
                                 f"{label} rolled back: {observed.rolled_back_message}", now))
    if observed.drift_message is not None and not new.get("drifted"):
        new["drifted"] = True
        if "drifted" in events:
            owed.append(_message("drifted", new, now, f"{label} drifted: {observed.drift_message}", now))
    elif observed.drift_message is None and new.get("drifted"):
        new["drifted"] = False
    if owed:
        new["pending"] = [*(new.get("pending") or []), *owed]
    return new
