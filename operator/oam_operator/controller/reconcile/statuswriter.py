"""Every status write of a pass, and the Events that announce it (docs/operator.md#the-status-writer).

One ``StatusWriter`` is made for each pass and carried through it, as Flux carries one patcher
through a reconcile: the pass calls ``checkpoint`` for the inventory checkpoint inside
``apply()``, and the caller calls ``conclude`` with the pass's result, which writes the final
status (or lets progress wait), posts the pass's Events and the Ready Event, and records what
the operator remembers of the Application. ``Memory``'s fields are assigned here and nowhere
else. The request itself goes through ``send`` (one JSON merge patch of the status
subresource) and Events through ``post``, so the write path is testable without a cluster.

When a new status must be written, and when it may wait (docs/operator.md#backoff-and-timeouts):
a status write is a request, and at fleet scale most of them were progress — the same
``Processing`` state with a new message or new inventory phases. The status is written when
something a user or a restart depends on changed:

- the state or the Ready condition's reason (every outcome, every state change);
- the set of inventory items (a checkpoint: an object is recorded before it is created, and
  a pruned one is dropped, docs/architecture.md#key-decisions);
- anything at all, outside ``Processing``;
- progress within ``Processing``, at most every ``PROGRESS_WRITE_INTERVAL`` seconds, so a
  long rollout still shows where it is (2 s: a pass that only created objects right after its
  checkpoint is not written, the wait for their readiness is shown within seconds). Progress
  after a checkpoint written in the same pass always waits: never two writes of one state in
  one pass.

What may wait is progress only: the next pass works from the in-memory status (the cache),
and after a restart the persisted one is as good an input (its items are the same; their
phases are re-derived, a re-apply of an already applied object is a server-side no-op).

A failed final write leaves the memory as it was: the next pass recomputes from the last
persisted inventory (or from progress on the same items), so no object recorded only in
memory can have been created unrecorded. A retryable failure (a conflict, throttling, an
outage) retries on the retry backoff (1 s doubling to 60 s, per Application, reset by the next
write that lands); a 404, or a failed uid test (the write names the uid it is for, so a pass of
a deleted Application never writes into a namesake), means the Application is gone: the pass
ends without an Event or a requeue (docs/operator.md#a-fresh-view); a
refusal that repeats on every retry (the status too large for etcd, a webhook's denial, a 422)
cannot be said in the status, so a
Warning Event says it once per message and the next attempt waits the error backoff
(docs/operator.md#identity-hostile-input-and-limits). A 403 is such a refusal only once it lasted 5 s
(docs/operator.md#a-403-in-the-first-seconds): until then it retries as a retryable failure does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.api.compact_inventory import CompactInventoryError, read_status_inventory
from oam_operator.api.conditions import Reason, State, ready_condition
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.events import MAX_EVENT_MESSAGE

from .application import Application, seen
from .history import Recorded
from .seams import ApplicationGone, Event, Memory, PassResult, StatusNotWritten

__all__ = ["PROGRESS_WRITE_INTERVAL", "Aftermath", "StatusWriter", "announced", "may_wait", "ready_event",
           "remember", "status_patch"]

log = logging.getLogger("oam_operator.controller")

PROGRESS_WRITE_INTERVAL = 2.0
_PROCESSING = State.PROCESSING.value
_UNANNOUNCED = frozenset({Reason.FIRST_SEEN.value, Reason.PROCESSING.value, Reason.DELETION_PROCESSING.value})


def _ready_reason(status: Mapping[str, Any]) -> str | None:
    ready = ready_condition(status)
    return None if ready is None else str(ready.get("reason"))


def _items(status: Mapping[str, Any]) -> set[tuple[Any, ...]] | None:
    """The identities of the inventory items (``compactInventory`` or a c-o-r ``inventory``);
    ``None`` when it cannot be read (then the status is written)."""
    try:
        items = read_status_inventory(status)
    except CompactInventoryError:
        return None
    return {(item.get("group"), item.get("kind"), item.get("namespace"), item.get("name")) for item in items}


def may_wait(persisted: Mapping[str, Any], new: Mapping[str, Any], seconds_since_write: float | None) -> bool:
    """Whether writing ``new`` over ``persisted`` may be left to a later pass.

    ``seconds_since_write`` is the time since this operator last wrote the status (``None``:
    never, e.g. after a restart).
    """
    if new.get("state") != _PROCESSING or persisted.get("state") != _PROCESSING:
        return False
    if _ready_reason(new) != _ready_reason(persisted):
        return False
    if new.get("observedGeneration") != persisted.get("observedGeneration"):
        return False
    items = _items(new)
    if items is None or items != _items(persisted):
        return False
    return seconds_since_write is not None and seconds_since_write < PROGRESS_WRITE_INTERVAL


def status_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch carrying the complete new status; vanished fields are set to ``null``."""
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    patch.update(new)
    return patch


def announced(status: Mapping[str, Any]) -> bool:
    """Whether the Ready condition of ``status`` is an outcome worth an Event on the Application.

    One Event per outcome, as Flux does: ``Ready``, an error, a retry, a restart, suspension,
    a blocked deletion. Not progress (``Processing``, ``DeletionProcessing``: the message changes
    with every wave and object, and the status shows it), and not ``FirstSeen`` (superseded
    within the same pass).
    """
    ready = ready_condition(status)
    return ready is not None and ready.get("reason") not in _UNANNOUNCED


def ready_event(status: Mapping[str, Any]) -> Event | None:
    """The Event that reports the Ready condition (docs/operator.md#events-on-the-application), or
    ``None`` when there is none."""
    ready = ready_condition(status)
    if ready is None:
        return None
    kind = "Warning" if status.get("state") == State.ERROR.value else "Normal"
    return Event(kind, str(ready.get("reason", "")), str(ready.get("message", ""))[:MAX_EVENT_MESSAGE])


def _key(event: Event) -> tuple[str, str, str]:
    return event.type, event.reason, event.message


def remember(memory: Memory, result: PassResult) -> None:
    """Put the state machines the pass advanced (``result.state``) into the memory: the next pass
    starts from them."""
    state = result.state
    if state is None:
        return
    memory.backoff, memory.error_backoff, memory.forbidden = state.backoff, state.error_backoff, state.forbidden
    memory.drift, memory.missing = state.drift, state.missing


def unverified(memory: Memory, body: Mapping[str, Any], error: ApiError) -> PassResult:
    """The result of a pass that could not tell whether kopf's copy of the Application is fresh
    (the API server did not answer): it acted on nothing, wrote nothing, and runs again on the
    retry backoff of the status writes, which advances here as it does for a failed write."""
    status = memory.status if memory.status is not None else dict(body.get("status") or {})
    return PassResult(status=status, delay=memory.retry_backoff.next(), outcome="pending",
                      error_type=str(error.status or "other"))


def _nothing(_: PassResult) -> None:
    return None


def _as_it_is(result: PassResult) -> PassResult:
    return result


@dataclass(frozen=True)
class Aftermath:
    """What the epilogue tells after the status and the Events: ``history`` records the revision
    (the Application, status before the pass, status after, recorded -> recorded; ``None``: no history, as in
    the delete branch), ``told`` takes the concluded result (metrics, watches, the log line),
    ``gone`` is called instead when the Application was found gone, and its result is the pass's."""

    history: Callable[[Application, Mapping[str, Any], Mapping[str, Any], Recorded | None], Recorded] | None = None
    told: Callable[[PassResult], None] = _nothing
    gone: Callable[[PassResult], PassResult] = _as_it_is


class StatusWriter:
    """The status writes and Events of one pass of one Application.

    ``send(patch)`` sends one merge patch of the Application's status (raises ``ApiError``);
    ``post(event)`` posts an Event on the Application (never raises); ``error_interval`` is the
    error backoff's ceiling (the operator's default interval, seconds); ``requested_at_key`` the
    annotation that requests a reconcile; ``aftermath`` what the epilogue tells after the status
    and the Events; ``granted``: the Application's namespace's Roles or RoleBindings changed since
    its last pass ended in a 403 (forbidden.py).
    """

    def __init__(self, body: Application | Mapping[str, Any], memory: Memory, *,
                 send: Callable[[dict[str, Any]], None],
                 post: Callable[[Event], None], error_interval: float, requested_at_key: str,
                 clock: Callable[[], float] = time.monotonic, aftermath: Aftermath | None = None,
                 granted: bool = False) -> None:
        self.app = app = Application.of(body)
        self.memory = memory
        self._send, self._post, self._error_interval, self._clock = send, post, error_interval, clock
        self._aftermath = aftermath or Aftermath()
        # The status the pass starts from, for the revision history's comparison.
        self._before = memory.status if memory.status is not None else dict(app.status)
        self._checkpointed = False
        self.gone = False  # a write found the Application gone (ApplicationGone)
        self._where = {"namespace": app.namespace, "name": app.name}
        # What this pass was given (the generation, the requested-at annotation), for the kopf
        # layer's wake-ups (handlers.py).
        memory.seen = seen(app.meta, requested_at_key)
        if granted:  # RBAC changed since the last 403: a 403 of this pass opens a new quiet window
            memory.forbidden.reset()

    @property
    def persisted(self) -> dict[str, Any]:
        """The status as last persisted: as this operator wrote it, else as the body has it."""
        memory = self.memory
        return memory.persisted if memory.persisted is not None else dict(self.app.status)

    def _write(self, status: dict[str, Any]) -> None:
        self._send({"status": status_patch(self.persisted, status)})
        self.memory.status = self.memory.persisted = status
        self.memory.written_at = self._clock()
        self.memory.status_forbidden.reset()
        self.memory.retry_backoff.reset()

    def checkpoint(self, status: dict[str, Any]) -> None:
        """The inventory checkpoint, written within the pass before its objects are created. A
        failure raises ``StatusNotWritten``; the pass then ends and ``conclude`` writes the
        same status with its retries and Warning."""
        try:
            self._write(status)
        except ApplicationGone as gone:
            self.gone = True
            raise StatusNotWritten(str(gone)) from gone
        except ApiError as error:
            raise StatusNotWritten(str(error)) from error
        self._checkpointed = True

    def conclude(self, result: PassResult) -> PassResult:
        """The pass's one epilogue, in this order: write the final status when it must be written
        now, post the Events, remember what the pass learnt, record the revision history, then
        tell the rest (``Aftermath``: metrics, watches, the log line) — or, when the Application
        was found gone, only that. May set ``result.delay`` (a failed write)."""
        result = self._conclude_status(result)
        after = self._aftermath
        if result.gone:
            return after.gone(result)
        if after.history is not None and not result.finished:
            self.memory.recorded = after.history(self.app, self._before, result.status, self.memory.recorded)
        after.told(result)
        return result

    def _conclude_status(self, result: PassResult) -> PassResult:
        memory = self.memory
        remember(memory, result)  # what the pass advanced, before a failed write advances more
        if self.gone:
            return self._gone(result)
        if result.profile_name is not None:
            memory.profile_name = result.profile_name
        if result.health_kinds is not None:
            memory.health_kinds = result.health_kinds
        memory.namespace_terminating = memory.namespace_terminating or result.namespace_terminating
        if result.finished:  # the finalizer goes: no status to write, only the pass's Events
            for event in result.events:
                self._post(event)
            return result
        if result.unreachable:
            # The API server did not answer the pass: a status write and an Event would not be
            # answered either. One request per retry step, not three (docs/operator.md#backoff-and-timeouts).
            result.delay = memory.retry_backoff.next()
            return result
        if not self._write_final(result):
            # A retryable failure: what the pass did is told; its outcome once the status is written.
            self._announce(result, ready_too=False)
            return result
        if self.gone:
            return self._gone(result)
        self._announce(result)
        return result

    @staticmethod
    def _gone(result: PassResult) -> PassResult:
        """The Application is gone: no Event, no further write, no requeue."""
        result.gone, result.delay, result.events = True, None, []
        return result

    def _write_final(self, result: PassResult) -> bool:
        """Write ``result.status`` if it must be now; ``False`` when a retryable failure left it
        unwritten (its outcome is announced once it is written)."""
        memory, previous = self.memory, self.persisted
        if result.status == previous:
            # One object held for both, not two equal ones: at 10,000 settled Applications a second
            # copy of each status is some 70 MiB (docs/operator.md#memory).
            if memory.persisted is None:
                memory.persisted = result.status
            memory.status = result.status = memory.persisted
            return True
        since = None if memory.written_at is None else self._clock() - memory.written_at
        if may_wait(previous, result.status, 0.0 if self._checkpointed else since):
            memory.status = result.status
            return True
        try:
            self._write(result.status)
        except ApplicationGone:
            self.gone = True
        except ApiError as error:
            quiet_403 = error.status == 403 and memory.status_forbidden.quiet(self._clock())
            if error.retryable or quiet_403:
                # A retryable failure on the retry backoff, not the pass's own: a write that fails
                # again and again (an outage) costs one request per step, never a tight loop. A 403
                # is retried quickly within its grace (forbidden.py), which bounds it.
                result.delay = memory.backoff.next("Retrying") if quiet_403 else memory.retry_backoff.next()
                log.warning("status write failed: %s", error,
                            extra={"fields": {**self._where, "retry_in": round(result.delay, 3)}})
                return False
            log.warning("status write failed: %s", error, extra={"fields": self._where})
            warning = Event("Warning", "StatusWriteFailed", f"The status could not be written: {error}")
            if _key(warning) != memory.last_event:
                memory.last_event = _key(warning)
                self._post(warning)
            result.delay = memory.error_backoff.next("StatusWriteFailed", self._error_interval)
        return True

    def _announce(self, result: PassResult, *, ready_too: bool = True) -> None:
        for event in result.events:
            self._post(event)
        if not ready_too:
            return
        ready = ready_event(result.status)
        if ready is None or not announced(result.status):
            return
        if _key(ready) != self.memory.last_event:
            self.memory.last_event = _key(ready)
            self._post(ready)
