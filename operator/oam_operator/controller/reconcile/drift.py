"""What a pass does about drift of its objects, and what it says (docs/operator.md#drift).

A pass of an Application in steady state asks the watch of owned objects (``ownedwatch.py``)
which of its Ready objects drifted: fields another manager took, or the object deleted. With
``spec.drift: Correct`` (the default) each drifted object is re-applied in that pass, the
operator's fields forced back (a deleted one is created again); one ``DriftCorrected`` Event
names what was corrected. With ``Report`` the change is left — the object is not re-applied,
and its reapply interval is held off while it drifts — and ``status.drift`` names each object
and field path, with a ``Drifted`` condition and a ``DriftDetected`` Event per episode. A
deleted object is created again in both modes: the inventory is what the Application is.

A fight with another controller (the object drifts again right after each correction) is
told from a one-off edit by counting corrections: ``FLAP_CORRECTIONS`` within ``FLAP_WINDOW``
hold correction of that object back for ``HOLD_FIRST``, doubling up to ``HOLD_MAX``, and
report it (``DriftFlapping``) instead of a write loop. An object deleted again and again is
such a fight too, whatever its phase and in both modes: each creation counts, and while held
it is not created. A Job deleted after it completed is no drift at all: it is finished
(docs/operator.md#finished-jobs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from oam_operator.api.application import DriftStatus
from oam_operator.common.durations import format_seconds
from oam_operator.reconciler.inventory import InventoryItem

from .watched import Drift, ObjectKey

__all__ = ["FLAP_CORRECTIONS", "FLAP_WINDOW", "HOLD_FIRST", "HOLD_MAX", "REPORTED", "WINDOW_REPORTED", "DriftTracker",
           "Drifted", "corrected_message", "drifted_condition"]

FLAP_WINDOW = timedelta(seconds=60)
FLAP_CORRECTIONS = 3
HOLD_FIRST = timedelta(seconds=60)
HOLD_MAX = timedelta(minutes=10)
SHOWN_FIELDS = 3
SHOWN_OBJECTS = 3
#: Why drift is left, as a DriftDetected message ends: the spec says so, or closed change
#: windows do (docs/operator.md#change-windows).
REPORTED = "left as it is (spec.drift: Report)"
WINDOW_REPORTED = "left as it is while the change window is closed (driftWhileClosed: Report)"


@dataclass
class DriftTracker:
    """The corrections of one Application's objects, to tell a fight from a one-off edit."""

    corrections: dict[ObjectKey, list[datetime]] = field(default_factory=dict)
    held: dict[ObjectKey, tuple[datetime, timedelta]] = field(default_factory=dict)  # until, hold

    def held_until(self, key: ObjectKey, now: datetime) -> datetime | None:
        """When correction of ``key`` may go on, while it is held back; ``None`` when it may now."""
        hold = self.held.get(key)
        if hold is None or hold[0] <= now:
            return None
        return hold[0]

    def corrected(self, key: ObjectKey, now: datetime) -> datetime | None:
        """Record a correction of ``key``; when it is the fight's ``FLAP_CORRECTIONS``-th within the
        window, hold it back and return until when."""
        recent = [at for at in self.corrections.get(key, []) if now - at < FLAP_WINDOW] + [now]
        self.corrections[key] = recent
        if len(recent) < FLAP_CORRECTIONS:
            return None
        previous = self.held.get(key)
        hold = HOLD_FIRST if previous is None else min(previous[1] * 2, HOLD_MAX)
        self.held[key] = (now + hold, hold)
        self.corrections[key] = []
        return now + hold

    def settled(self, now: datetime) -> None:
        """Forget corrections older than the window and holds long over (memory stays bounded)."""
        for key in [k for k, times in self.corrections.items() if all(now - at >= FLAP_WINDOW for at in times)]:
            del self.corrections[key]
        for key in [k for k, (until, _) in self.held.items() if now - until >= HOLD_MAX]:
            del self.held[key]


@dataclass(frozen=True)
class Drifted:
    """One drifted object as a pass found it."""

    item: InventoryItem
    drift: Drift
    held_until: datetime | None = None

    def status(self) -> DriftStatus:
        item = self.item
        return DriftStatus(api_version=item.api_version, kind=item.kind,
                           namespace=item.namespace or None, name=item.name,
                           fields=list(self.drift.paths) or None, deleted=True if self.drift.deleted else None,
                           held_until=self.held_until)

    def describe(self, namespace: str) -> str:
        item = self.item
        where = item.name if item.namespace in ("", namespace) else f"{item.namespace}/{item.name}"
        if self.drift.deleted:
            return f"{item.kind} {where} (deleted)"
        shown = ", ".join(self.drift.paths[:SHOWN_FIELDS])
        if len(self.drift.paths) > SHOWN_FIELDS:
            shown += f", and {len(self.drift.paths) - SHOWN_FIELDS} more"
        return f"{item.kind} {where} ({shown})"


def _listed(found: Sequence[Drifted], namespace: str) -> str:
    shown = "; ".join(d.describe(namespace) for d in found[:SHOWN_OBJECTS])
    if len(found) > SHOWN_OBJECTS:
        shown += f"; and {len(found) - SHOWN_OBJECTS} more"
    return shown


def _what_it_does(held: Sequence[Drifted]) -> str:
    deleted = {d.drift.deleted for d in held}
    if deleted == {True}:
        return "deletes these objects"
    return "sets these fields" if deleted == {False} else "sets these fields or deletes these objects"


def corrected_message(found: Sequence[Drifted], namespace: str) -> str:
    return f"Corrected drift: {_listed(found, namespace)}"


def drifted_condition(found: Sequence[Drifted], namespace: str, now: datetime,
                      left: str = REPORTED) -> tuple[str, str]:
    """The ``Drifted`` condition's reason and message for what is left drifting (``left``: why)."""
    held = [d for d in found if d.held_until is not None]
    if held:
        first = min(d.held_until for d in held if d.held_until is not None)
        wait = format_seconds(round((first - now).total_seconds())) if first > now else "0s"
        window = format_seconds(FLAP_WINDOW.total_seconds())
        return "DriftFlapping", (f"{_listed(held, namespace)} kept drifting right after each correction "
                                 f"({FLAP_CORRECTIONS} corrections within {window}): another controller "
                                 f"{_what_it_does(held)}; correcting again in {wait}")
    return "DriftDetected", f"{_listed(found, namespace)} changed by another field manager; {left}"
