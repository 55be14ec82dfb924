"""What a pass records in ``status.timeline`` and what it hands to tracing (docs/operator.md#the-timeline).

A revision is keyed by the digest of its input (``status.processingDigest``; ``generation/<g>``
before one is known). Its entry starts in the first pass that sees that key, gains a wave when a
pass first sees every object of the wave Ready (the wave's gates are the objects that pass found
still waiting before), and ends at the first ``ready`` or ``error`` outcome, or when the next
revision starts (``Superseded``). An ended entry is never changed again. The trace id and span
ids are derived from the Application's uid and the key, so they are the same in every pass and
after a restart (docs/operator.md#tracing).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from oam_operator.api.application import ApplicationStatus
from oam_operator.api.conditions import State
from oam_operator.api.timeline import MAX_GATES, MAX_REVISIONS, MAX_WAVES, Outcome, TimelineEntry, TimelineWave
from oam_operator.reconciler.inventory import InventoryItem, Phase

__all__ = ["Before", "PassFacts", "PassSpan", "Traced", "ended_at", "observe", "parse_started", "span_id", "trace_id"]

_ENDS = {"ready": Outcome.READY, "error": Outcome.FAILED}


@dataclass(frozen=True)
class Before:
    """What the status said when the pass began."""

    state: State | None
    key: str | None

    @classmethod
    def of(cls, status: ApplicationStatus) -> Before:
        return cls(status.state, status.processing_digest)


@dataclass(frozen=True)
class PassFacts:
    """What a pass tells the timeline about itself."""

    uid: str
    namespace: str
    name: str
    generation: int
    started: datetime
    ended: datetime
    outcome: str  # PassResult.outcome
    applied: bool  # the reconciler's apply ran: the inventory's phases are this revision's
    writes: int  # the reconciler's write requests
    tracing: bool
    seen: datetime | None = None  # when an event first showed this generation (Runtime.saw_generation)


@dataclass(frozen=True)
class PassSpan:
    """A pass that did something for an open revision: one span under the revision's root."""

    trace_id: str
    parent_id: str
    started: datetime
    ended: datetime
    outcome: str
    writes: int
    revision: int | None


@dataclass(frozen=True)
class Traced:
    """What a pass hands to tracing: its own span, and the revisions whose end it saw."""

    uid: str
    namespace: str
    name: str
    pass_span: PassSpan | None
    ended: tuple[TimelineEntry, ...]


def trace_id(uid: str, key: str) -> str:
    """The revision's trace id: 32 hex digits of a hash of the uid and the revision's key."""
    return hashlib.sha256(f"{uid}/{key}".encode()).hexdigest()[:32]


def span_id(trace: str, *parts: str) -> str:
    """A span id of the revision's own spans (``revision``, ``wave/<n>``, ``wave/<n>/<gate>``)."""
    return hashlib.sha256("/".join((trace, *parts)).encode()).hexdigest()[:16]


def parse_started(entry: TimelineEntry) -> datetime:
    return datetime.fromisoformat(entry.started.replace("Z", "+00:00"))


def observe(status: ApplicationStatus, inventory: Sequence[InventoryItem] | None, before: Before,
            facts: PassFacts) -> Traced | None:
    """Advance ``status.timeline`` by what the pass saw; ``None`` when tracing is off or there is
    nothing to trace."""
    key = status.processing_digest or f"generation/{facts.generation}"
    entries = list(status.timeline or [])
    if not entries and before.state is State.READY and before.key == key:
        return None  # Ready before the timeline existed (an upgrade): there is nothing to explain
    ended: list[TimelineEntry] = []
    current = entries[-1] if entries else None
    if current is None or current.key != key:
        began = _began(current, facts)
        if current is not None and current.outcome is None:
            _end(current, Outcome.SUPERSEDED, began)
            ended.append(current)
        current = TimelineEntry(key=key, started=_iso(began),
                                trace_id=trace_id(facts.uid, key) if facts.tracing else None)
        entries.append(current)
    was_open = current.outcome is None
    changed = False
    parent = None if current.trace_id is None else span_id(current.trace_id, "revision")
    if was_open:
        if status.revision is not None:
            current.revision = status.revision
        if facts.applied and current.applied_ms is None:
            current.applied_ms = max(_ms(facts.started, current), 0)
        if facts.applied and inventory is not None:
            applying, changed = _record_waves(current, inventory, facts)
            if applying is not None and current.trace_id is not None:
                parent = span_id(current.trace_id, "wave", str(applying))
        if facts.outcome in _ENDS:
            _end(current, _ENDS[facts.outcome], facts.ended)
            ended.append(current)
    status.timeline = entries[-MAX_REVISIONS:]
    if not facts.tracing:
        return None
    span = None
    if was_open and current.trace_id and parent and (facts.writes or changed or current.outcome is not None):
        span = PassSpan(current.trace_id, parent, facts.started, facts.ended, facts.outcome, facts.writes,
                        current.revision)
    traced = tuple(entry for entry in ended if entry.trace_id)
    if span is None and not traced:
        return None
    return Traced(facts.uid, facts.namespace, facts.name, span, traced)


def _record_waves(entry: TimelineEntry, inventory: Sequence[InventoryItem],
                  facts: PassFacts) -> tuple[int | None, bool]:
    """Record the waves first seen Ready; remember the first waiting objects of the next one.
    Returns the wave the pass began in (its span's parent) and whether the entry changed."""
    desired = [item for item in inventory if item.digest]
    waves = list(entry.waves or [])
    open_waves = sorted({item.apply_order for item in desired} - {wave.wave for wave in waves})
    began = open_waves[0] if open_waves else None
    seen_waiting = entry.waiting or []  # what the last pass found waiting: the gates, once Ready
    waiting: list[str] | None = None
    applying: int | None = None
    for wave in open_waves:
        members = [item for item in desired if item.apply_order == wave]
        pending = [_name(item, facts.namespace) for item in members if not _ready(item)]
        if pending:
            waiting, applying = pending[:MAX_GATES], wave
            break
        names = {_name(item, facts.namespace) for item in members}
        gates = [gate for gate in seen_waiting if gate in names]
        if len(waves) < MAX_WAVES:
            waves.append(TimelineWave(wave=wave, ready_ms=_ms(facts.ended, entry), gates=gates or None))
        seen_waiting = []
    changed = (len(waves), waiting, applying) != (len(entry.waves or ()), entry.waiting, entry.applying)
    entry.waves = waves or None
    entry.waiting, entry.applying = waiting, applying
    return began, changed


def _began(previous: TimelineEntry | None, facts: PassFacts) -> datetime:
    """When a new revision began: when its generation was first seen, unless that is no later than
    the previous revision's start (the same generation with new input, a ClusterProfile's change:
    then this pass saw it first), or after this pass began."""
    seen = facts.seen
    if seen is None or _aware(seen) > _aware(facts.started):
        return facts.started
    if previous is not None and _aware(seen) <= parse_started(previous):
        return facts.started
    return seen


def _end(entry: TimelineEntry, outcome: str, at: datetime) -> None:
    """End ``entry``; ``applying`` stays, naming the wave left unfinished (its span ends here too)."""
    entry.outcome = outcome
    entry.ended_ms = max(_ms(at, entry), 0)
    entry.waiting = None


def _ready(item: InventoryItem) -> bool:
    return item.phase is Phase.COMPLETED or (item.phase is Phase.READY and item.status == "Current")


def _name(item: InventoryItem, namespace: str) -> str:
    where = item.name if not item.namespace or item.namespace == namespace else f"{item.namespace}/{item.name}"
    return f"{item.kind}/{where}"


def _ms(at: datetime, entry: TimelineEntry) -> int:
    return round((_aware(at) - parse_started(entry)).total_seconds() * 1000)


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    return _aware(moment).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ended_at(entry: TimelineEntry) -> datetime | None:
    """When ``entry`` ended, ``None`` while open."""
    if entry.ended_ms is None:
        return None
    return parse_started(entry) + timedelta(milliseconds=entry.ended_ms)

