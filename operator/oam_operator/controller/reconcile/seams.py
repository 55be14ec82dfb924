"""The types a pass and its callers exchange (docs/operator.md#states-and-phases).

A pass (``passes.py``) is a plain function of the Application's body, the operator's memory
of it and the environment; it returns a ``PassResult`` — data — and writes nothing itself but
the in-call checkpoint, through the ``StatusWriter`` it is handed. Everything the operator
remembers between passes is in ``Memory``; its fields are assigned only by the status writer
(``statuswriter.py``), from what a pass returned and, in its epilogue, from the revision
history. The backoffs and the drift tracker are state machines the pass advances; no watch
thread touches ``Memory``: a watch only wakes an Application.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.oam.pipeline import Pipeline
from oam_operator.operatorpolicies.missing import MissingDependencies
from oam_operator.reconciler.cachedreads import CachedReads
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.inventory import InventoryItem
from oam_operator.reconciler.options import ReconcilerOptions
from oam_operator.reconciler.reconciler import Reconciler

from .appindex import AppIndex
from .backoff import Backoff, ErrorBackoff, Jitter, RetryBackoff
from .composition import OperatorTransform
from .delivery import Target
from .drift import DriftTracker
from .forbidden import ForbiddenGrace
from .history import Recorded
from .quiet import Confirmed
from .tenancy import TenantClients
from .timeline import Traced
from .watched import Drift

__all__ = ["ApplicationGone", "Checkpointer", "Environment", "Event", "Memory", "PassResult", "PassState",
           "StatusNotWritten"]


@dataclass
class Memory:
    """What the operator remembers of one Application between passes (dropped on deletion)."""

    status: dict[str, Any] | None = None  # the next pass's input: persisted, or newer progress
    persisted: dict[str, Any] | None = None  # the status as this operator last wrote it
    written_at: float | None = None  # time.monotonic() of that write
    backoff: Backoff = field(default_factory=Backoff)
    error_backoff: ErrorBackoff = field(default_factory=ErrorBackoff)
    retry_backoff: RetryBackoff = field(default_factory=RetryBackoff)  # failed status writes (backoff.py)
    last_event: tuple[str, str, str] | None = None
    seen: tuple[int, str | None, str | None] | None = None  # application.seen of the last pass's body
    profile_name: str = ""  # the ClusterProfile the Application asks for (wakes it when that one changes)
    types: frozenset[tuple[str, str]] = frozenset()  # (kind, type) its spec names (wakes it when a definition changes)
    #: (group, kind) its health rules judge: any change of such an object wakes a waiting pass (docs/health.md)
    health_kinds: frozenset[tuple[str, str]] = frozenset()
    namespace_terminating: bool = False
    drift: DriftTracker = field(default_factory=DriftTracker)  # corrections per object (drift.py)
    forbidden: ForbiddenGrace = field(default_factory=ForbiddenGrace)  # 403s retried quietly (forbidden.py)
    status_forbidden: ForbiddenGrace = field(default_factory=ForbiddenGrace)  # the same, of status writes
    recorded: Recorded | None = None  # the revision history as last written (history.py; set by the epilogue)
    confirmed: Confirmed | None = None  # the last full pass that confirmed it (quiet.py; set by the runtime)
    unconfirmed: str = ""  # else why the last full pass confirmed nothing (quiet.FullReason; "" before any)
    missing: MissingDependencies = field(default_factory=MissingDependencies)  # app-dependency targets missing


@dataclass
class PassState:
    """The state machines of ``Memory`` a pass advances, as its own copies: the pass returns them
    in its result (``PassResult.state``) and the status writer puts them into the memory."""

    backoff: Backoff
    error_backoff: ErrorBackoff
    forbidden: ForbiddenGrace
    drift: DriftTracker
    missing: MissingDependencies

    @classmethod
    def of(cls, memory: Memory) -> PassState:
        return cls(copy.deepcopy(memory.backoff), copy.deepcopy(memory.error_backoff),
                   copy.deepcopy(memory.forbidden), copy.deepcopy(memory.drift), copy.deepcopy(memory.missing))


@dataclass
class Environment:
    settings: Settings
    transform: OperatorTransform
    clients: TenantClients
    cluster_id: str
    profiles: Callable[[str], Mapping[str, Any] | None]
    #: Every ClusterProfile by name, for a topology policy's selection (fleet.py)
    all_profiles: Callable[[], Mapping[str, Mapping[str, Any]]] = field(default=lambda: {})
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    jitter: Jitter = field(default_factory=Jitter)
    reconciler_metrics: Any = None
    on_transform: Callable[[float, bool], None] | None = None
    apps: AppIndex | None = None  # the Application index of app-dependency policies (orchestration.py)
    # Whether changes of a (group, kind) wake the Applications waiting for them (readiness.py).
    watched: Callable[[str, str], bool] | None = None
    # What another manager took from an owned object, (group, kind, namespace, name) (ownedwatch.py);
    # ``None``: drift is not watched (found at the reapply interval).
    drift: Callable[[str, str, str, str], Drift | None] | None = None
    # For an object this process never wrote nor compared: the fields the desired object (the last
    # argument) sets that the operator's manager does not own (ownedwatch.py, unowned.py).
    unverified_drift: Callable[[str, str, str, str, Mapping[str, Any]], Drift | None] | None = None
    # Told of every object the reconciler wrote (the watch's baseline, ownedwatch.py).
    on_written: Callable[[Mapping[str, Any]], None] | None = None
    # Answers the reconciler's reads of owned objects from the watch (docs/operator.md#reads-from-the-watch).
    cached_reads: CachedReads | None = None
    # The cluster an Application goes to, (profile name, profile, namespace or None when deleting) ->
    # None for the operator's own (remotes.py, docs/multicluster.md); ``None``: always the operator's own.
    targets: Callable[[str, Mapping[str, Any] | None, str | None], Target | None] | None = None
    #: Builds a pass's reconciler, (domain, client, options) -> Reconciler; a test passes its own.
    reconciler: Callable[[str, ClusterClient, ReconcilerOptions], Reconciler] = Reconciler
    #: Whether traces are exported (docs/operator.md#tracing): the timeline then records trace ids.
    tracing: bool = False
    #: When this process first saw a generation of an Application, (uid, generation) -> time or None
    #: (the start of its revision's timeline, timeline.py); ``None``: the first pass's time is used.
    generation_seen: Callable[[str, int], datetime | None] | None = None

    @property
    def pipeline(self) -> Pipeline:
        return self.transform.pipeline


class ApplicationGone(Exception):
    """Raised by a status write that found the Application gone: a 404, or another uid under its
    name (docs/operator.md#a-fresh-view). The pass then acts on nothing more."""


class StatusNotWritten(Exception):
    """Raised by a checkpoint that could not be written; the pass then ends as a checkpoint
    pass and leaves the write, with its error handling, to the end of the pass."""


class Checkpointer(Protocol):
    """What a pass is handed to write its in-call checkpoint (``StatusWriter`` in the operator)."""

    def checkpoint(self, status: dict[str, Any]) -> None:
        """Persist ``status`` now; raises ``StatusNotWritten`` when it could not be."""


@dataclass
class Event:
    type: str
    reason: str
    message: str


@dataclass
class PassResult:
    """The outcome of a pass: the status to persist, when to run again, what it learnt.

    ``delay`` is seconds (``0`` = at once, no jitter) or ``None`` (no timed requeue).
    ``outcome`` names it for logs and metrics (``ready``, ``progressing``, ``pending``,
    ``error``, ``deleted``). ``finished`` is set by the delete branch when the finalizer may go.
    """

    status: dict[str, Any]
    delay: float | None
    outcome: str
    finished: bool = False
    events: list[Event] = field(default_factory=list)
    error_type: str | None = None
    operations: dict[str, int] = field(default_factory=dict)
    #: The ClusterProfile the Application asks for, ``None`` when the pass did not get that far.
    profile_name: str | None = None
    #: Whether the Application's namespace was seen being deleted (final once true).
    namespace_terminating: bool = False
    #: The (group, kind) its health rules judge, ``None`` when the pass did not get that far.
    health_kinds: frozenset[tuple[str, str]] | None = None
    #: Objects whose drift this pass corrected (the drift metric).
    drift_corrections: int = 0
    #: The operator's own API server did not answer the pass (a connection error): the status
    #: writer does not try to write either, and the pass runs again on the retry backoff.
    unreachable: bool = False
    #: The Application was found gone (a 404, or a namesake of another uid): nothing more is done.
    gone: bool = False
    #: The inventory the pass ended with, ``None`` when it did not read it (the watches' kinds).
    inventory: list[InventoryItem] | None = None
    #: The state machines the pass advanced, for the memory (``None``: it advanced none).
    state: PassState | None = None
    #: What the pass hands to tracing (timeline.py; ``None``: nothing, or tracing is off).
    traced: Traced | None = None
    #: Seconds the pass's confirmation of the Application from the watches alone holds: its routine
    #: passes may be skipped that long (quiet.py); ``None``: it confirmed nothing.
    confirms: float | None = None
    #: Why it confirmed nothing (a ``quiet.FullReason``), for the metric; ``""`` when it did.
    unconfirmed: str = ""
