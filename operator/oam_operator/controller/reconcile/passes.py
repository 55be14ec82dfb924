"""One pass of the driver (docs/operator.md#states-and-phases): the apply branch and the delete branch.

A pass is a plain, synchronous function of the Application's body, the operator's memory of
it (the status cache and the backoff state) and the environment; it returns the new status,
when to run again and what it learnt (``seams.PassResult``). The only write it makes is the
in-call checkpoint, through the ``Checkpointer`` it is handed; the final status, the Events
and the memory are the status writer's (``statuswriter.py``). Keeping the logic here makes
it testable step by step without kopf.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from oam_operator.api.application import (
    ApplicationStatus,
    BundleState,
    BundleStatus,
    ClusterStatus,
    DriftPolicy,
    DriftStatus,
    HookStatus,
    RolledBackStatus,
    RolloutStatus,
    Waves,
)
from oam_operator.api.compact_inventory import CompactInventoryError
from oam_operator.api.conditions import Condition, ConditionType, Reason, State, conditions_for, find_condition
from oam_operator.api.meta import GROUP, VERSION, application_path
from oam_operator.api.revisions import restored_spec, revision_name, revision_path
from oam_operator.api.summary import summary_of
from oam_operator.common.durations import parse_go_duration
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.operatorpolicies import AppRef, Closed, OperatorPolicies, closed
from oam_operator.operatorpolicies.graph import MISSING
from oam_operator.operatorpolicies.missing import DEPENDENCY_MISSING, missing_message
from oam_operator.operatorpolicies.rollout import Rollout
from oam_operator.operatorpolicies.topology import declared
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.completion import finished
from oam_operator.reconciler.errors import (
    ApiError,
    ObjectValidationError,
    OwnershipConflictError,
    PermanentApiError,
    ReconcilerError,
)
from oam_operator.reconciler.inventory import InventoryItem, Phase, dump_inventory
from oam_operator.reconciler.objects import ObjectRef
from oam_operator.reconciler.reconciler import Checkpoint, Reconciler
from oam_operator.reconciler.status import DefaultStatusAnalyzer

from . import fleet, fleetns, health, orchestration, timeline
from .accessreview import missing_permissions, resource_type
from .application import Application
from .checks import ORDER, Refusal, Requeue, Step, Subject, on_applied_spec, served_by
from .definitionuse import used_definitions
from .delivery import DeliveryRefused, NamespaceNotAllowed, Target
from .drift import REPORTED, WINDOW_REPORTED, Drifted, corrected_message, drifted_condition
from .encode import EncodedTree
from .hooks import HookRunner
from .hookspec import Hook, HookPhase, HookRefused, of_phase, split_hooks
from .inventorycodec import inventory_of, write_inventory
from .permissions import deletion_permissions, not_permitted_message, required_permissions
from .plan import Digests, PassHooks, digests_of, owner_id, reconciler_options
from .progress import apply_progress, capitalised, checkpoint_progress, delete_progress
from .quiet import FULL_PASS_EVERY, FullReason
from .readiness import WATCHED_WAIT, waits_for_wake_up
from .rollback import blocking_object, failed_message, last_good, spec_digest
from .seams import Checkpointer, Environment, Event, Memory, PassResult, PassState, StatusNotWritten
from .tenancy import NotPermitted

log = logging.getLogger("oam_operator.controller")
MAX_MESSAGE = 32768  # the API server's limit for a condition message
HOOK_POLL = 2.0  # seconds between looks at a running hook (hook objects are not watched)
HOOKS_RECORDED = "Recorded the hooks' runs in the status"
NAMESPACE_TERMINATING = ("Namespace {namespace} is being deleted: its objects are deleted with the operator's "
                         "identity")


def _seconds(text: str) -> float:
    return parse_go_duration(text).total_seconds()


def _episode(entries: list[DriftStatus] | None) -> list[tuple[Any, ...]]:
    """What makes a drift episode: the objects and their fields, not when correction resumes."""
    return [(e.kind, e.namespace, e.name, tuple(e.fields or ()), e.deleted, e.held_until is not None)
            for e in entries or []]


#: The phases of an item whose object the operator wrote: its deletion is drift.
_WRITTEN = frozenset({Phase.READY, Phase.CREATING, Phase.UPDATING})


def _is_ready(item: InventoryItem) -> bool:
    return item.phase is Phase.COMPLETED or (item.phase is Phase.READY and item.status == "Current")


def _second(now: datetime) -> datetime:
    """``now`` as persisted (UTC, whole seconds), so a pass compares what the next one reads."""
    aware = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    return aware.replace(microsecond=0)


@dataclass(frozen=True)
class _Timing:
    """How often a pass runs again, how long processing may take, and a policy's retry interval."""

    interval: float
    timeout: str
    retry_interval: float | None


@dataclass(frozen=True)
class _Where:
    """Where a pass works: its environment, the owner id it stamps, the remote cluster (or ``None``)."""

    env: Environment
    owner_id: str
    target: Target | None


@dataclass
class _Stamp:
    """What the epilogue (``render``) writes: the outcome, whether the generation is observed, the
    object counts, and the conditions the new ones take their transition times from."""

    baseline: list[Condition]
    verdict: tuple[State, Reason, str] | None = None
    observes_generation: bool = False
    counts: tuple[int, int] | None = None


@dataclass
class _Found:
    """What the apply branch's steps find (the checks' subject, the reconciler, the inventory); the
    delete branch finds the inventory and the reconciler too."""

    subject: Subject | None = None
    reconciler: Reconciler | None = None
    inventory: list[InventoryItem] | None = None
    clusters: list[str] | None = None  # the clusters a topology policy selects (fleet.py)
    groups: list[list[str]] | None = None  # a rollout policy's groups, in order (what its progress names)
    halt: _Halt | None = None  # the rollout of this revision is halted
    hooks: list[Hook] | None = None  # the delete branch's hooks (``deletion_hooks``)


@dataclass(frozen=True)
class _DriftFound:
    """What a pass found of drift: the objects it corrected, and the Drifted condition (reason,
    message) while some are left drifting."""

    corrections: int
    verdict: tuple[str, str] | None


@dataclass(frozen=True)
class _Admitted:
    """What the apply stage is given: everything the checks and the pass's own steps found and allowed."""

    reconciler: Reconciler
    encoded: EncodedTree
    inventory: list[InventoryItem]
    policies: OperatorPolicies


@dataclass(frozen=True)
class _Applied:
    """What the reconciler's ``apply`` did: whether everything is applied and ready, whether the
    Application was Ready before, the inventory's size before and after and whether it changed,
    the objects the Application holds, the requests by operation."""

    done: bool
    was_ready: bool
    items_before: int
    items_after: int
    changed: bool
    objects: int
    operations: dict[str, int]


@dataclass
class _Halt:
    """A rollout halted at ``revision`` by ``cluster``'s failure (``message``: what it said);
    ``revert``: its onFailure; what the pass returned to which revision, and what it could not."""

    revision: int
    cluster: str
    message: str
    revert: bool
    actions: list[str] = field(default_factory=list)  # what it did, kept in ``status.rollout`` across passes

    def did(self, action: str) -> None:
        if action not in self.actions:
            self.actions.append(action)

    def verdict(self) -> str:
        said = f"Rollout of revision {self.revision} halted: cluster {self.cluster} failed: {self.message}"
        if not self.revert:
            return f"{said}; onFailure is halt: the clusters that took it keep it"
        return f"{said}; " + "; ".join(self.actions) if self.actions else said


def upcoming_revision(status: ApplicationStatus) -> int:
    """The revision this pass applies: the status's, or the next one when the input changed since it was counted."""
    revision = status.revision or (1 if status.last_applied_at else 0)
    return revision + 1 if status.processing_digest != status.last_processing_digest else revision


class _Pass:
    """Shared state of one pass; the two branches below are its methods.

    The branches work on the typed ``ApplicationStatus`` and return at the first outcome; they
    never stamp the generation, the counts or the conditions themselves: ``render`` (called by
    ``finish``, as component-operator-runtime's reconciler sets its status once after the work)
    writes those once per pass and renders the status to its persisted JSON; the epilogue that
    sends it is the status writer's.
    """

    def __init__(self, body: Application | Mapping[str, Any], memory: Memory, env: Environment,
                 checkpointer: Checkpointer | None = None) -> None:
        self.app = app = Application.of(body)
        self.checkpointer = checkpointer
        self.state = PassState.of(memory)  # advanced here, put into the memory by the status writer
        self.settings = env.settings
        self.spec, self.namespace, self.name = app.spec, app.namespace, app.name
        self.domain = self.settings.domain
        self.now = env.clock()
        previous = memory.status if memory.status is not None else app.status
        self.status = ApplicationStatus.model_validate(previous)
        # How often and how long: the spec's, the settings', or a reconciliation policy's (``gate``).
        self.timing = _Timing(_seconds(self.spec.interval or self.settings.default_interval),
                              self.spec.timeout or self.settings.default_timeout, None)
        # Where the pass works: the operator's cluster, or a remote one (``work_on``).
        self.where = _Where(env, owner_id(env.cluster_id, self.namespace, self.name), None)
        self.namespace_terminating = memory.namespace_terminating
        # The revision applied but not recorded yet (history.py): its spec is read from here.
        self.unrecorded = memory.recorded.pending if memory.recorded is not None else None
        self.stamp = _Stamp(baseline=list(self.status.conditions or []))  # what the epilogue writes
        self.events: list[Event] = []
        self.drift_found: _DriftFound | None = None  # what conclude_drift found; None: it did not look
        self.window: Closed | None = None  # closed change windows that leave drift reported (hold_for_window)
        self.held: Closed | None = None  # closed windows hold a new revision; the applied one's spec is applied
        self.digests = Digests("", "")  # of this pass's input (``restart_on_change``)
        self.found = _Found()  # what the apply branch's steps find, and the delete branch's inventory
        self.forbidden = False  # the pass ended in a 403 (forbidden.py)
        # With a topology policy its objects are cluster Applications, written with the operator's identity (fleet.py).
        self.topology = declared(app.raw_spec)
        # A rollback policy's restore: the revision whose recorded spec this pass applies instead (``restore``).
        self.restoring: int | None = None
        self.applying = False  # the reconciler's apply ran: a failure is this revision's (``roll_back``)
        self.deleting = False  # the delete branch runs (a hook's record says Deleting)

    @property
    def env(self) -> Environment:
        return self.where.env

    @property
    def owner_id(self) -> str:
        return self.where.owner_id

    @property
    def target(self) -> Target | None:
        """The remote cluster the pass works on (docs/multicluster.md), ``None``: the operator's own."""
        return self.where.target

    @property
    def interval(self) -> float:
        return self.timing.interval

    @property
    def timeout_text(self) -> str:
        return self.timing.timeout

    @property
    def retry_interval(self) -> float | None:
        """A reconciliation policy's retryInterval."""
        return self.timing.retry_interval

    # -- status helpers -------------------------------------------------------------------------

    def set_state(self, state: State, reason: Reason, message: str) -> None:
        """Record the pass's outcome; ``render`` writes state, conditions and summary from it."""
        self.stamp.verdict = (state, reason, message)

    def finish(self, outcome: PassResult) -> PassResult:
        """The pass's end: a pass that did not end in a 403 closes the run of 403s (forbidden.py),
        the status is rendered (``render``), and a remote cluster's watches follow the kinds of
        the inventory the pass ended with (the operator's own cluster's are the status writer's
        epilogue's, from ``outcome.inventory``)."""
        if not self.forbidden:
            self.state.forbidden.reset()
        outcome.state = self.state
        self.render(outcome)
        owned = self.target.owned if self.target is not None else None
        if owned is not None:
            owner = (self.namespace, self.name)
            if outcome.finished:
                owned.retain(owner, ())
            elif self.found.inventory is not None:
                owned.ensure(self.found.inventory)
                owned.retain(owner, [item.identity() for item in self.found.inventory])
        return outcome

    def confirms(self, outcome: PassResult) -> tuple[float | None, str]:
        """How long this pass's confirmation of the Application holds, in seconds: it found the
        Application as it should be from the watches alone, so its routine passes may be skipped
        until then (``FULL_PASS_EVERY`` intervals, or until an object's reapply interval comes due);
        ``None`` and the ``FullReason`` when it confirmed nothing (quiet.py has the rules)."""
        subject = self.found.subject
        if (outcome.outcome != "ready" or self.stamp.verdict is None or self.stamp.verdict[0] is not State.READY
                or subject is None):
            return None, FullReason.NOT_READY
        drift = self.state.drift
        if outcome.drift_corrections or self.status.drift or drift.held or drift.corrections:
            return None, FullReason.DRIFT
        if any(outcome.operations.values()):
            return None, FullReason.REQUESTS
        if subject.reads_outside:
            return None, FullReason.OUTSIDE
        if (subject.hooks or subject.policies.health_checks or subject.policies.topology is not None
                or self.target is not None or self.held is not None or self.restoring is not None
                or self.window is not None):
            return None, FullReason.POLICIES
        hold = FULL_PASS_EVERY * self.interval
        reapply = self.settings.reapply_interval_duration
        applied = [item.last_applied_at for item in self.found.inventory or () if item.last_applied_at is not None]
        if reapply and applied:
            hold = min(hold, (min(applied) + reapply - self.now).total_seconds())
        return (hold, "") if hold > 0 else (None, FullReason.REAPPLY)

    def render(self, outcome: PassResult) -> PassResult:
        """Stamp ``observedGeneration``, the counts and the outcome once, and render the status to
        its persisted JSON (``outcome.status``)."""
        status = self.status
        if self.stamp.observes_generation:
            status.observed_generation = self.app.generation
        if self.stamp.counts is not None:
            status.objects, status.ready_objects = self.stamp.counts
        if self.stamp.verdict is not None:
            state, reason, message = self.stamp.verdict
            message = message.replace("\n", " ")[:MAX_MESSAGE]
            drifted = self.drifted_condition()
            rolled_back = status.rolled_back.message if status.rolled_back is not None else None
            status.conditions = conditions_for(state, reason.value, message, self.app.generation, self.now,
                                               self.stamp.baseline, drifted, rolled_back)
            status.state = state
            status.summary = summary_of(reason.value, message)
            if drifted is not None and state is State.READY:
                status.summary = summary_of(drifted[0], f"Drifted: {drifted[1]}")
        # Fields read from the persisted status are written back as they were read (a value
        # the model would default, say in an unreadable ``compactInventory``, is not added).
        outcome.status = compatible_digests(
            status.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True), self.digests.legacy)
        subject = self.found.subject
        outcome.profile_name = subject.profile_name if subject is not None and subject.profile_checked else None
        outcome.namespace_terminating = self.namespace_terminating
        analyzer = getattr(self.found.reconciler, "analyzer", None)
        if isinstance(analyzer, health.ExpressionAnalyzer):
            outcome.health_kinds = analyzer.kinds()
        outcome.events = self.events + outcome.events
        outcome.drift_corrections = self.drift_found.corrections if self.drift_found is not None else 0
        # The runtime's watches hold only the operator's own cluster's objects (a remote's: ``finish``).
        outcome.inventory = self.found.inventory if self.target is None or self.found.inventory is None else []
        return outcome

    def drifted_condition(self) -> tuple[str, str] | None:
        """The ``Drifted`` condition while ``status.drift`` names objects (this pass's finding, or
        the last pass's when this one did not look)."""
        if self.drift_found is not None:
            return self.drift_found.verdict
        previous = find_condition(self.stamp.baseline, ConditionType.DRIFTED.value)
        if not self.status.drift or previous is None:
            return None
        return previous.reason, previous.message

    def conclude(self, delay: float | None, outcome: str, *, jitter: bool = True, **extra: Any) -> PassResult:
        """The pass's result (its status is rendered by ``render``); ``delay`` jittered."""
        if delay is not None and delay > 0 and jitter:
            delay = self.env.jitter(delay)
        return PassResult({}, delay, outcome, **extra)

    def fail(self, reason: Reason, message: str, *, error_type: str, delay: float | None = None) -> PassResult:
        """An ``Error`` state: permanent until the input, a permission or another owner changes."""
        self.set_state(State.ERROR, reason, message)
        self.state.backoff.reset()
        if delay is None and self.retry_interval is not None:
            delay = self.retry_interval
        if delay is None:
            delay = self.state.error_backoff.next(reason.value, self.interval)
        return self.conclude(delay, "error", error_type=error_type)

    def reconciler(self, client: ClusterClient | None = None) -> Reconciler:
        """The reconciler of this pass, with the Application's identity unless ``client`` is given."""
        hooks = PassHooks(on_written=self.env.on_written, cached_reads=self.env.cached_reads,
                          metrics=self.env.reconciler_metrics, clock=self.env.clock, completed=self.seen_completed)
        options = reconciler_options(self.settings, self.app.raw_spec, self.namespace, self.app.annotations, hooks)
        if client is None and self.topology is not None:
            client = self.env.clients.operator_client
        if client is None:
            client = self.env.clients.for_application(self.namespace, self.spec.service_account_name or "")
        return self.env.reconciler(self.domain, client, options)

    def deletion_client(self) -> tuple[ClusterClient, bool]:
        """The delete branch's client (tenancy.py) and whether the namespace is being deleted.

        Only an impersonating client needs the namespace's state: then one GET with the
        operator's identity per pass until the namespace is seen terminating (which is final).
        """
        clients = self.env.clients
        if self.topology is not None:  # its cluster Applications are the operator's (fleet.py)
            return clients.operator_client, False
        client = clients.for_deletion(self.namespace, self.spec.service_account_name or "")
        if client is clients.operator_client:
            return client, False
        if not self.namespace_terminating:
            try:
                namespace = clients.operator_client.request("read", "GET", f"/api/v1/namespaces/{self.namespace}")
            except ApiError:
                namespace = {}
            self.namespace_terminating = bool((namespace.get("metadata") or {}).get("deletionTimestamp"))
        if self.namespace_terminating:
            return clients.inside_namespace(client, self.namespace), True
        return client, False

    def processing(self) -> None:
        """Processing has started now, unless it already had."""
        if self.status.processing_since is None:
            self.status.processing_since = _second(self.now)

    def timed_out(self) -> bool:
        since = self.status.processing_since
        if since is None:
            return False
        return self.now - since >= parse_go_duration(self.timeout_text)

    def reconciler_error(self, error: Exception, deleting: bool) -> PassResult:
        """Classify an exception of ``apply()``/``delete()``/``is_deletion_allowed()``
        (docs/operator.md#error-handling)."""
        if self.target is not None and isinstance(error, ApiError):
            error = error.with_context(self.target.label)  # which cluster failed (docs/multicluster.md#faults)
        if isinstance(error, ReconcilerError) and error.retryable:
            self.state.error_backoff.reset()
            if deleting:
                self.set_state(State.DELETION_PENDING, Reason.DELETION_RETRYING, capitalised(str(error)))
            else:
                # Processing has started even if nothing could be read yet: a cluster that never
                # answers runs out of time too (docs/multicluster.md#rollout: Pending/Timeout).
                self.processing()
                reason = Reason.TIMEOUT if self.timed_out() else Reason.RETRYING
                self.set_state(State.PENDING, reason, capitalised(str(error)))
            delay = error.retry_after if error.retry_after is not None else self.state.backoff.next("Retrying")
            status_code = getattr(error, "status", None)
            # The operator's own API server did not answer at all: the status cannot be written
            # either, so the writer does not try (docs/operator.md#backoff-and-timeouts). A remote
            # cluster's silence is said in the hub's status as usual.
            unreachable = isinstance(error, ApiError) and error.status == 0 and self.target is None
            return self.conclude(delay, "pending", error_type=str(status_code) if status_code else "other",
                                 unreachable=unreachable)
        if isinstance(error, ObjectValidationError):
            return self.fail(Reason.INVALID_OBJECTS, capitalised(str(error)), error_type="validation")
        if isinstance(error, OwnershipConflictError):
            return self.fail(Reason.OWNERSHIP_CONFLICT, capitalised(str(error)), error_type="conflict")
        if isinstance(error, PermanentApiError):
            if error.status == 403:
                self.forbidden = True
                if self.state.forbidden.quiet(self.now.timestamp()):
                    return self.quietly_retried(error)
                if self.found.reconciler is not None:
                    return self.not_permitted(error, deleting)
            return self.fail(Reason.API_ERROR, capitalised(str(error)), error_type=str(error.status))
        log.exception("internal error in a pass of %s/%s", self.namespace, self.name, exc_info=error)
        return self.fail(Reason.ERROR, f"Internal error: {type(error).__name__}: {error}", error_type="other")

    def not_permitted(self, error: PermanentApiError, deleting: bool = False) -> PassResult:
        """A lasting 403: ``NotPermitted``, naming the identity, everything the API server denies
        it of what the pass needs — its objects' in the apply branch, the deletion's (the deletion
        guard's cluster-wide lists among them) in the delete branch — and the command printing
        the Role (docs/operator.md#not-permitted-and-the-role-it-needs). When the reviews find
        nothing missing (an escalation refused by RBAC, a request outside the objects' verbs) or
        cannot be made, no Role would help: ``ApiError`` with the API server's text, as before.
        Either way the pass waits the error backoff."""
        assert self.found.reconciler is not None
        client = self.found.reconciler.client
        resolve = partial(resource_type, client)
        if deleting:
            items = [(f"{i.group}/{i.version}" if i.group else i.version, i.kind, i.namespace, i.name)
                     for i in self.found.inventory or []]
            needed, need = deletion_permissions(items, resolve), "the Application's deletion needs it"
        else:
            subject = self.found.subject
            waved = subject.encoded.objects if subject is not None and subject.encoded else []
            objects: list[Mapping[str, Any]] = [*waved, *(hook.manifest for hook in self.applied_hooks())]
            needed = required_permissions(
                objects, self.namespace, resolve, cross_namespace=self.settings.allow_cross_namespace_objects,
                update_policy=self.spec.update_policy or self.settings.default_update_policy.value,
                domain=self.domain)
            need = "the Application's objects need it"
        missing = missing_permissions(client, needed) if needed else None
        if not missing:
            return self.fail(Reason.API_ERROR, capitalised(str(error)), error_type="403")
        message = not_permitted_message(client.impersonated_user, missing, self.namespace, self.name, need)
        if self.target is not None:  # the grant belongs on that cluster (docs/multicluster.md#faults)
            message = f"{capitalised(self.target.label)}: {message}"
        return self.fail(Reason.NOT_PERMITTED, message, error_type="403")

    def quietly_retried(self, error: PermanentApiError) -> PassResult:
        """A 403 within its grace window (forbidden.py): the state, conditions and generation
        stamp stay as they were (what the pass recorded of its objects is kept), no Event, and
        the pass runs again on the ``Retrying`` backoff."""
        log.info("retrying a 403 quietly (the API server's authorizer may not have caught up yet): %s", error,
                 extra={"fields": {"namespace": self.namespace, "name": self.name}})
        self.stamp.verdict = None
        self.stamp.observes_generation = False
        if not self.status.conditions and self.stamp.baseline:  # a first pass: it has no state of its own yet
            self.set_state(State.PENDING, Reason.FIRST_SEEN, "First seen")
        return self.conclude(self.state.backoff.next("Retrying"), "pending")

    # -- the apply branch (docs/operator.md#the-apply-branch) ---------------------------------------------

    def refuse(self, refusal: Refusal) -> PassResult:
        """The outcome of a check's refusal (checks.py), requeued as it says."""
        if refusal.requeue is Requeue.BACKOFF:
            return self.fail(refusal.reason, refusal.message, error_type=refusal.error_type or "other")
        self.set_state(refusal.state, refusal.reason, refusal.message)
        if refusal.requeue is Requeue.NONE:
            return self.conclude(None, "pending")
        self.state.backoff.reset()  # INTERVAL: only a new document can fix it
        return self.conclude(self.interval, "error", error_type=refusal.error_type)

    def restart_on_change(self, subject: Subject) -> PassResult | None:
        """After ``profile``: record the digest; a changed one restarts processing."""
        status, profile = self.status, subject.profile
        status.profile = subject.resolved_profile
        definitions = used_definitions(subject.transform.pipeline.transformer.definitions, self.app.raw_spec)
        digests = digests_of(self.domain, self.app.raw_spec, self.app.generation, subject.resolved_profile, profile,
                             fleetns.moved(subject.body, self.domain), definitions)
        self.digests, legacy = digests, digests.legacy
        if status.revision_digest:  # the compatible form (``compatible_digests``): ours is in revisionDigest
            if status.last_processing_digest == status.processing_digest:
                status.last_processing_digest = status.revision_digest
            status.processing_digest = status.revision_digest
            status.revision_digest = None
        elif status.processing_digest == legacy:  # written by an operator before the history: the same input
            if status.last_processing_digest == legacy:
                status.last_processing_digest = self.digests.current
            status.processing_digest = self.digests.current
        if not status.processing_digest:
            status.processing_digest = self.digests.current
        elif status.processing_digest != self.digests.current:
            status.processing_digest = self.digests.current
            status.processing_since = None
            self.state.backoff.reset()
            if self.restoring is not None:
                return None  # a rollback's restore goes on at once: no Restarting in between (its one Event)
            self.set_state(State.PROCESSING, Reason.RESTARTING,
                           "Restarting processing due to changes of the Application or its ClusterProfile")
            return self.conclude(0.0, "progressing")
        return None

    # -- delivery to another cluster (docs/multicluster.md#how-a-pass-delivers) -------------------------

    def deliver(self, subject: Subject) -> PassResult | None:
        """After ``profile``: the cluster the Application goes to. A profile that now names another
        cluster than the one holding the objects is refused, never a silent orphan."""
        targets = self.env.targets
        if targets is None:
            return None
        try:
            target = targets(subject.profile_name, subject.profile, self.namespace)
        except NamespaceNotAllowed as refused:
            return self.fail(Reason.NOT_PERMITTED, str(refused), error_type="other")
        except DeliveryRefused as refused:
            return self.fail(Reason.CLUSTER_UNUSABLE, str(refused), error_type="other")
        except ReconcilerError as error:
            return self.reconciler_error(error, deleting=False)
        refused_target = fleetns.refusal(subject.profile_name, subject.profile, subject.body, self.domain)
        if refused_target is not None:  # docs/multicluster.md#topology: the target namespace too
            return self.fail(Reason.NOT_PERMITTED, refused_target, error_type="other")
        cluster = target.cluster_id if target is not None else None
        own = self.env.cluster_id  # a kubeconfig of the operator's own cluster is no switch
        if (cluster or own) != (self.status.cluster or own) and self.holds_objects():
            held = self.status.cluster or "the operator's own cluster"
            now = f"cluster {cluster}" if cluster else "the operator's own cluster"
            return self.fail(Reason.CLUSTER_SWITCHED, (
                f"ClusterProfile {subject.profile_name or '(none)'} now delivers to {now}, but this Application's "
                f"objects are on {held}: point the profile back, or delete the Application to delete them there"),
                error_type="other")
        self.status.cluster = cluster
        self.work_on(target)
        subject.cluster_id = self.env.cluster_id
        return None

    def holds_objects(self) -> bool:
        try:
            return bool(inventory_of(self.status))
        except CompactInventoryError:
            return True  # unreadable: assume it holds some (the inventory step refuses it)

    def work_on(self, target: Target | None) -> None:
        """From now on the pass's requests go to ``target`` (``None``: the operator's own cluster),
        with its id in the owner id and its watches instead of the operator's own cluster's."""
        if target is None:
            return
        owned = target.owned
        env = dataclasses.replace(
            self.env, clients=target.clients, cluster_id=target.cluster_id,
            watched=owned.watched if owned is not None else None, drift=owned.drift if owned is not None else None,
            unverified_drift=owned.unverified_drift if owned is not None else None,
            on_written=owned.written if owned is not None else None, cached_reads=owned)
        self.where = _Where(env, owner_id(target.owner_cluster or target.cluster_id, self.namespace, self.name),
                            target)

    def deliver_deletion(self) -> PassResult | None:
        """Before deleting: the cluster the inventory's objects are on (``status.cluster``); the
        deletion waits, naming it, while it cannot be reached through the profile."""
        targets, cluster = self.env.targets, self.status.cluster
        if targets is None or not cluster:
            return None
        profile_name = self.status.profile or self.spec.profile or self.settings.default_profile
        profile = self.env.profiles(profile_name) if profile_name else None
        try:
            target = targets(profile_name, profile, None)
        except DeliveryRefused as refused:
            return self.deletion_waits(cluster, profile_name, str(refused))
        except ReconcilerError as error:
            return self.reconciler_error(error, deleting=True)
        if target is None or target.cluster_id != cluster:
            where = f"cluster {target.cluster_id}" if target is not None else "the operator's own cluster"
            why = "is not found" if profile is None else f"now delivers to {where}"
            return self.deletion_waits(cluster, profile_name, f"ClusterProfile {profile_name} {why}")
        self.work_on(target)
        return None

    def deletion_waits(self, cluster: str, profile_name: str, why: str) -> PassResult:
        self.set_state(State.DELETION_PENDING, Reason.DELETION_RETRYING, (
            f"Deletion waits for cluster {cluster} (ClusterProfile {profile_name}): {why}; annotate "
            f'{self.domain}/abandon: "true" to leave its objects there'))
        return self.conclude(self.state.backoff.next("Retrying"), "pending")

    def prepare_reconciler(self, subject: Subject) -> PassResult | None:
        """After ``tenancy``: the reconciler with the Application's identity; it also answers
        which APIs the cluster serves (for ``flux-apis``)."""
        try:
            self.found.reconciler = self.reconciler()
        except NotPermitted as refusal:  # the tenancy check just passed the same rule
            return self.fail(Reason.NOT_PERMITTED, str(refusal), error_type="other")
        subject.served = served_by(self.found.reconciler.client)
        return None

    def gate(self, subject: Subject) -> PassResult | None:
        """After ``transform``: the operator policies' timing for this pass, and whether they
        hold it (orchestration.py)."""
        timing, mine = orchestration.timing(subject.policies), self.timing
        self.timing = _Timing(mine.interval if timing.interval is None else timing.interval,
                              mine.timeout if timing.timeout is None else timing.timeout,
                              mine.retry_interval if timing.retry_interval is None else timing.retry_interval)
        held = orchestration.hold(self.env.apps, AppRef(self.namespace, self.name), subject.policies, self.status)
        if held is None:
            self.state.missing.clear()
            return None
        if held.error:
            return self.fail(held.reason, held.message, error_type="other")
        self.set_state(held.state, held.reason, held.message)
        due: float | None = None
        if held.reason is Reason.DEPENDENCIES_NOT_READY:
            self.state.backoff.reset()
            self.state.error_backoff.reset()
            due = self.warn_missing()
        return self.conclude(due, "pending", jitter=False)

    def warn_missing(self) -> float | None:
        """While Waiting: a Warning Event for dependencies missing longer than the grace
        (operatorpolicies/missing.py); the seconds until the next is due, else ``None``."""
        missing = [AppRef(d.namespace, d.name) for d in self.status.dependencies or [] if d.state == MISSING]
        grace = self.settings.missing_dependency_grace
        overdue, due = self.state.missing.observe(missing, self.now, self.settings.missing_dependency_grace_duration)
        if overdue:
            self.events.append(Event("Warning", DEPENDENCY_MISSING, missing_message(self.namespace, overdue, grace)))
        return due

    def read_inventory(self, subject: Subject) -> PassResult | None:
        """Before ``size``: the persisted inventory. An unreadable one observes no generation
        (the status is not this pass's to vouch for)."""
        try:
            self.found.inventory = inventory_of(self.status)
        except CompactInventoryError as error:
            self.stamp.observes_generation = False
            return self.fail(Reason.ERROR, capitalised(str(error)), error_type="other")
        subject.inventory = self.found.inventory
        return None

    # -- automatic rollback (docs/operator.md#automatic-rollback) ----------------------------------------

    def restore(self, subject: Subject) -> PassResult | None:
        """After ``suspended``: while the spec is the one a rollback policy rolled back (its digest
        in ``status.rolledBack``), the pass applies the restored revision's recorded spec instead
        (the Application's spec is never rewritten); a new spec forgets it and is tried once."""
        rolled = self.status.rolled_back
        if rolled is None:
            return None
        if spec_digest(self.app.raw_spec) != rolled.digest:
            self.status.rolled_back = None
            return None
        spec = self.spec_of_revision(rolled.restores)
        if spec is None and self.status.revision and self.status.revision != rolled.revision:
            spec = self.spec_of_revision(self.status.revision)  # the restore's own record (history.py)
        if spec is None:
            return self.fail(Reason.ROLLED_BACK, f"{rolled.message}, which is no longer in the revision history",
                             error_type="other")
        self.restoring = rolled.restores
        self.app = Application.of({**self.app.body, "spec": restored_spec(spec, self.app.raw_spec)})
        self.spec = self.app.spec
        subject.body = self.app.body
        return None

    def roll_back(self, result: PassResult) -> PassResult:
        """The pass's end with a rollback policy: a revision that ended in ``Error`` or ran out of
        time after its apply began returns to the last Ready revision. Its spec's digest is
        remembered, the pass says so (``Error``/``RolledBack``; its Ready Event is the one Event)
        and runs again at once to apply the restored spec (``restore``). A restore that fails is
        not rolled back again: its failure is said as it is."""
        verdict, subject = self.stamp.verdict, self.found.subject
        policy = subject.policies.rollback if subject is not None else None
        if (verdict is None or policy is None or not policy.on_failure or self.restoring is not None
                or not self.applying or self.topology is not None or self.held is not None):
            return result
        state, reason, message = verdict
        if state is not State.ERROR and reason is not Reason.TIMEOUT:
            return result
        revision = self.status.revision or 0
        try:
            good = last_good(self.env.clients.operator_client, self.domain, self.namespace, self.app.uid, revision)
        except ApiError as error:
            log.warning("reading the revision history to roll back failed: %s", error,
                        extra={"fields": {"namespace": self.namespace, "name": self.name}})
            return result
        if good is None:
            return result  # nothing Ready to return to: the failure stands
        report = self.found.reconciler.report if self.found.reconciler is not None else None
        blocked = blocking_object(report.pending) if report is not None else None
        why = message
        if blocked is not None:
            why = f"{blocked[0]}: {blocked[1]}"
            if reason is Reason.TIMEOUT:
                why += f", not Ready within {self.timeout_text}"
        text = failed_message(revision, why, good.number)
        self.status.rolled_back = RolledBackStatus(revision=revision, digest=spec_digest(self.app.raw_spec),
                                                   restores=good.number, object=blocked[0] if blocked else None,
                                                   message=text, at=_second(self.now))
        self.set_state(State.ERROR, Reason.ROLLED_BACK, text)
        log.info("rolled back: %s", text, extra={"fields": {"namespace": self.namespace, "name": self.name}})
        return self.conclude(0.0, "error", error_type="other", operations=result.operations)

    # -- lifecycle hooks (docs/operator.md#lifecycle-hooks) ----------------------------------------------

    def run_hooks(self, phase: HookPhase) -> PassResult | None:
        """Advance ``phase``'s hooks (hooks.py); ``None`` once they all succeeded, else the pass's
        end: still processing (or deleting) while they run, ``Error``/``HookFailed`` when one failed."""
        deleting = phase in (HookPhase.PRE_DELETE, HookPhase.POST_DELETE)
        hooks = of_phase(self.deletion_hooks() if deleting else self.applied_hooks(), phase)
        if not hooks:
            return None
        run = "delete" if deleting else f"r{upcoming_revision(self.status)}"
        try:
            outcome = self.hook_runner().run(phase, hooks, run)
        except StatusNotWritten:
            return self.hooks_recorded()
        except (ApiError, ReconcilerError) as error:
            return self.reconciler_error(error, deleting=deleting)
        if outcome.failed is not None:
            return self.fail(Reason.HOOK_FAILED, outcome.failed, error_type="other")
        if outcome.waiting is None:
            return None
        delay = min(self.state.backoff.next("Processing"), HOOK_POLL)
        if deleting:
            self.set_state(State.DELETING, Reason.DELETION_PROCESSING, outcome.waiting)
            return self.conclude(delay, "progressing")
        self.processing()
        return self.still_processing(outcome.waiting, delay, {})

    def on_failure(self, result: PassResult) -> PassResult:
        """A revision that failed (``Error`` or ``Timeout`` once its hooks or apply began, as
        ``roll_back`` counts it) runs its ``OnFailure`` hooks, once per revision; their outcome
        changes nothing of the verdict. A rollback's restore saying ``RolledBack`` did not fail."""
        verdict = self.stamp.verdict
        if verdict is None or verdict[1] is Reason.ROLLED_BACK or self.held is not None:
            return result
        failed = verdict[0] is State.ERROR or verdict[1] is Reason.TIMEOUT
        if not failed or not (self.applying or verdict[1] is Reason.HOOK_FAILED):
            return result
        hooks = of_phase(self.applied_hooks(), HookPhase.ON_FAILURE)
        if hooks:
            try:
                self.hook_runner().run(HookPhase.ON_FAILURE, hooks, f"r{upcoming_revision(self.status)}")
            except (StatusNotWritten, ApiError) as error:
                log.warning("the OnFailure hooks did not run in this pass: %s", error,
                            extra={"fields": {"namespace": self.namespace, "name": self.name}})
        return result

    def applied_hooks(self) -> list[Hook]:
        """The apply branch's hooks (none with a topology policy: each cluster Application runs its own)."""
        subject = self.found.subject
        return list(subject.hooks) if subject is not None and self.topology is None else []

    def deletion_hooks(self) -> list[Hook]:
        """The delete branch's hooks, from the spec's transform (none in a namespace being deleted,
        where nothing can be created, nor when the spec no longer transforms: then deletion goes on)."""
        if self.found.hooks is not None:
            return self.found.hooks
        self.found.hooks = []
        if self.topology is not None:
            return self.found.hooks
        profile_name = self.status.profile or ""
        try:
            encoded, _ = self.env.transform.transform(
                self.app.body, cluster_id=self.env.cluster_id, domain=self.domain,
                profile=self.env.profiles(profile_name) if profile_name else None, profile_name=profile_name)
            hooks = split_hooks(encoded, self.domain)[1]
        except (HookRefused, OamError, ReconcilerError, ValueError) as error:
            self.env.transform.forget(self.namespace, self.name)
            log.warning("the delete hooks could not be read, deleting without them: %s", error,
                        extra={"fields": {"namespace": self.namespace, "name": self.name}})
            return self.found.hooks
        self.env.transform.forget(self.namespace, self.name)  # what it read is the deleted Application's
        deleting = (HookPhase.PRE_DELETE, HookPhase.POST_DELETE)
        if any(phase in hook.phases for hook in hooks for phase in deleting) and self.namespace_being_deleted():
            log.warning("namespace %s is being deleted: the delete hooks are not run", self.namespace,
                        extra={"fields": {"namespace": self.namespace, "name": self.name}})
            return self.found.hooks
        self.found.hooks = hooks
        return hooks

    def namespace_being_deleted(self) -> bool:
        """Whether the Application's namespace is terminating (nothing can be created in it)."""
        if self.namespace_terminating:
            return True
        try:
            namespace = self.env.clients.operator_client.request("read", "GET", f"/api/v1/namespaces/{self.namespace}")
        except ApiError:
            return False
        return bool((namespace.get("metadata") or {}).get("deletionTimestamp"))

    def hook_runner(self) -> HookRunner:
        reconciler = self.found.reconciler
        assert reconciler is not None
        if self.status.hooks is None:
            self.status.hooks = []
        return HookRunner(reconciler.client, self.status.hooks, domain=self.domain, owner_id=self.owner_id,
                          namespace=self.namespace, default_timeout=self.timeout_text, now=self.now,
                          record=self.record_hooks)

    def record_hooks(self, records: list[HookStatus]) -> None:
        """Persist the hooks' new runs before their objects are created (the pass's checkpoint)."""
        self.status.hooks = records
        if self.checkpointer is None:
            raise StatusNotWritten("no checkpoint writer: the record ends the pass")
        verdict = self.stamp.verdict
        self.set_state(*self.hooks_recorded_state())
        rendered = self.render(PassResult({}, None, "progressing")).status
        self.stamp.verdict = verdict
        self.checkpointer.checkpoint(rendered)

    def hooks_recorded_state(self) -> tuple[State, Reason, str]:
        if self.deleting:
            return State.DELETING, Reason.DELETION_PROCESSING, HOOKS_RECORDED
        self.processing()
        return State.PROCESSING, Reason.PROCESSING, HOOKS_RECORDED

    def hooks_recorded(self) -> PassResult:
        """The hooks' runs are recorded, not created: the status is written at the pass's end and
        the next pass creates them."""
        self.set_state(*self.hooks_recorded_state())
        return self.conclude(0.0, "progressing")

    # -- change windows (docs/operator.md#change-windows) ------------------------------------------------

    def hold_for_window(self, subject: Subject) -> PassResult | None:
        """After ``inventory``: while the change windows are closed at the pass's clock, a new
        revision (a new digest not yet applied, a new Application's first included) writes nothing:
        ``Waiting``/``ChangeWindowClosed``, and the pass runs again when they may open
        (``Closed.wake_at``), not before. What is applied stays as it is; a revision already being
        applied is not held. Drift of the applied revision is corrected unless an owner says
        ``driftWhileClosed: Report`` (then reported, as ``spec.drift: Report``, until they open),
        also while a new revision is held: its recorded spec is applied instead (``keep_applied``)."""
        windows = subject.windows
        if self.restoring is not None:
            return None  # a restore is no change: it returns to what was applied (docs/operator.md#automatic-rollback)
        new_revision = self.status.processing_digest != self.status.last_processing_digest
        if windows is None or (not new_revision and windows.corrects_drift_while_closed):
            return None  # nothing the windows decide in this pass: no search
        shut = closed(windows, self.now)
        if shut is None:
            return None
        if not new_revision or self.keep_applied(subject, shut):
            self.window = None if windows.corrects_drift_while_closed else shut
            return None
        return self.held_by(shut)

    def keep_applied(self, subject: Subject, shut: Closed) -> bool:
        """A new revision held: the pass goes on with the recorded spec of the revision already
        applied (``status.revision``'s ControllerRevision, as ``restore`` reads it), so its drift
        is corrected or reported; no revision is counted, no hook runs and the verdict is still
        ``held_by``. ``False`` (nothing applied, as before) when that record is gone or the spec
        no longer passes the checks, and with a topology policy (its clusters hold their own)."""
        number = self.status.revision
        if not number or self.topology is not None:
            return False
        spec = self.spec_of_revision(number)
        if spec is None:
            return False
        refusal = on_applied_spec(subject, restored_spec(spec, self.app.raw_spec))
        if refusal is not None:
            log.warning("the applied revision %d is not applied while held: %s", number, refusal.message,
                        extra={"fields": {"namespace": self.namespace, "name": self.name}})
            return False
        self.held = shut
        return True

    def held_by(self, shut: Closed, operations: dict[str, int] | None = None) -> PassResult:
        """``Waiting``/``ChangeWindowClosed`` until the windows may open (``Closed.wake_at``, not jittered)."""
        self.state.backoff.reset()
        self.state.error_backoff.reset()
        self.set_state(State.WAITING, Reason.CHANGE_WINDOW_CLOSED, shut.message)
        return self.conclude(max(0.0, (shut.wake_at - self.now).total_seconds()), "pending", jitter=False,
                             operations=operations or {})

    # -- a topology's cluster Applications (docs/multicluster.md#topology) ------------------------------

    def cluster_applications(self, subject: Subject) -> PassResult | None:
        """After ``inventory``: with a topology policy, the objects to apply are the cluster
        Applications of the clusters it selects, one wave per rollout group, not the components'
        objects. Selecting none applies and prunes nothing (``Waiting``/``NoClusters``). A rollout
        halted by a failed cluster writes the new revision nowhere more: its cluster Applications
        stay as they are, or return to their last Ready revision (docs/multicluster.md#rollout)."""
        policies = subject.policies
        topology = policies.topology
        if policies.rollout is None:
            self.status.rollout = None
        if topology is None:
            self.status.clusters = self.status.cluster_summary = None
            return None
        profiles = self.env.all_profiles()
        clusters = fleet.selected(topology, profiles)
        self.found.clusters = clusters
        if not clusters:
            self.status.clusters, self.status.cluster_summary = [], "0/0"
            self.set_state(State.WAITING, Reason.NO_CLUSTERS,
                           f"No ClusterProfile is selected by the topology policy {go_quote(topology.policy)}")
            return self.conclude(self.interval, "pending")
        revision = upcoming_revision(self.status)
        ordered = fleet.groups(clusters, profiles, policies.rollout)
        # Only a rollout reads the cluster Applications before applying them (has one failed?);
        # the verdict reads them after, for the status.
        states = {state.cluster: state for state in self.cluster_states()} if policies.rollout is not None else {}
        halt = self.found.halt = self.halted(policies.rollout, ordered, states, revision)
        self.found.groups = ordered if policies.rollout is not None else None
        if halt is None:
            body, domain = self.app.body, self.domain
            waves = [[fleet.child(body, cluster, domain, revision, labels=fleet.labels_of(profiles, cluster))
                      for cluster in group] for group in ordered]
            if policies.rollout is not None:
                self.status.rollout = RolloutStatus(revision=revision, groups=len(ordered))
        else:
            kept = [self.kept_while_halted(states[cluster], revision, halt, fleet.labels_of(profiles, cluster))
                    for group in ordered for cluster in group]
            waves = [[manifest for manifest in kept if manifest is not None]]
            if self.status.rollout is not None:
                self.status.rollout.actions = list(halt.actions) or None
        if topology.on_removal == "orphan":
            failed = self.orphan_removed(subject.inventory, {c["metadata"]["name"] for w in waves for c in w})
            if failed is not None:
                return failed
        subject.encoded = fleet.encoded(waves, self.domain)
        return None

    def halted(self, rollout: Rollout | None, ordered: list[list[str]], states: Mapping[str, fleet.ClusterState],
               revision: int) -> _Halt | None:
        """Whether the rollout of ``revision`` is halted: it was, or a cluster that took it failed now."""
        if rollout is None:
            return None
        previous = self.status.rollout
        if previous is not None and previous.revision == revision and previous.halted:
            return _Halt(revision, previous.halted, previous.message or "", rollout.on_failure == "revert",
                         list(previous.actions or ()))
        failed = fleet.failed(states, [cluster for group in ordered for cluster in group], revision)
        if failed is None:
            return None
        halt = _Halt(revision, failed.cluster, failed.why, rollout.on_failure == "revert")
        self.status.rollout = RolloutStatus(revision=revision, groups=len(ordered), halted=halt.cluster,
                                            message=halt.message)
        return halt

    def kept_while_halted(self, state: fleet.ClusterState, revision: int, halt: _Halt,
                          labels: Mapping[str, str]) -> dict[str, Any] | None:
        """A cluster's Application while the rollout of ``revision`` is halted: back to its last
        Ready revision when it took this one and ``onFailure`` is revert (the fleet Application's
        spec of that revision, from its history), else as it is; ``None`` when it does not exist."""
        if state.carries is None:
            return None
        if halt.revert and state.carries == revision and state.ready_revision and state.ready_revision < revision:
            spec = self.spec_of_revision(state.ready_revision)
            if spec is not None:
                halt.did(f"reverted {state.cluster} to revision {state.ready_revision}")
                return fleet.child(self.app.body, state.cluster, self.domain, state.ready_revision, spec, labels)
            halt.did(f"{state.cluster} keeps revision {revision} (revision {state.ready_revision} is not in the "
                     "history)")
        elif halt.revert and state.carries == revision:
            halt.did(f"{state.cluster} keeps revision {revision} (it was never Ready)")
        live = state.live or {}
        return fleet.child(self.app.body, state.cluster, self.domain, state.carries, live.get("spec") or {})

    def spec_of_revision(self, number: int) -> Mapping[str, Any] | None:
        """The fleet Application's spec of revision ``number``, from its revision history (history.py),
        or as its pass applied it while that revision waits to be recorded (``history.Pending``)."""
        if self.unrecorded is not None and self.unrecorded.number == number:
            return self.unrecorded.spec
        path = revision_path(self.namespace, revision_name(self.name, number))
        try:
            recorded = self.env.clients.operator_client.request("read", "GET", path)
        except ApiError:
            return None
        spec = (recorded.get("data") or {}).get("spec")
        return spec if isinstance(spec, Mapping) else None

    def orphan_removed(self, inventory: Sequence[InventoryItem], kept: set[str]) -> PassResult | None:
        """``onRemoval: orphan``: a cluster Application about to be pruned is annotated to abandon
        its objects first, so its deletion leaves them on its cluster."""
        client = self.env.clients.operator_client
        for item in inventory:
            if (item.group, item.kind) != (GROUP, fleet.KIND) or item.name in kept or not item.digest:
                continue
            try:
                client.request("patch", "PATCH", application_path(item.namespace, item.name),
                               body={"metadata": {"annotations": {f"{self.domain}/abandon": "true"}}},
                               content_type="application/merge-patch+json")
            except ApiError as error:
                if error.status != 404:
                    return self.reconciler_error(error, deleting=False)
        return None

    def cluster_states(self) -> list[fleet.ClusterState]:
        """Each selected cluster's line, from its cluster Application: the watch's copy, else a read."""
        states = []
        cached, client = self.env.cached_reads, self.env.clients.operator_client
        before = {line.name: line.ready_revision for line in self.status.clusters or ()}
        for cluster in self.found.clusters or ():
            name = fleet.child_name(self.name, cluster)
            found: Mapping[str, Any] | None = None
            answer = cached.lookup(ObjectRef(GROUP, VERSION, fleet.KIND, self.namespace, name)) if cached else None
            if answer is not None and answer.state == "present":
                found = answer.obj
            else:
                try:
                    found = client.request("read", "GET", application_path(self.namespace, name))
                except ApiError:
                    found = None
            states.append(fleet.cluster_state(cluster, name, found, self.domain, before.get(cluster)))
        return states

    def apply_branch(self) -> PassResult:
        """The apply branch in three stages, each taking what the one before returned: admitted
        by the checks and the pass's own steps, applied by the reconciler, then the verdict. Any
        stage may end the pass with its result instead. Every outcome observes the generation,
        except an unreadable inventory (the status is not this pass's to vouch for)."""
        admitted = self.admit()
        if isinstance(admitted, PassResult):
            return self.roll_back(self.on_failure(admitted))
        applied = self.apply(admitted)
        if isinstance(applied, PassResult):
            return self.roll_back(self.on_failure(applied))
        return self.roll_back(self.on_failure(self.verdict(admitted, applied)))

    def admit(self) -> _Admitted | PassResult:
        """The checks and the pass's own steps, one table read top to bottom (checks.ORDER)."""
        status, settings = self.status, self.settings
        self.stamp.observes_generation = True
        if not status.observed_generation:
            # First seen: recorded, and the pass goes on at once. No write of its own: the
            # pass's one status write (the inventory checkpoint) follows in a few milliseconds,
            # so a separate Pending/FirstSeen write (and Event) would only cost requests. The
            # outcome's conditions take their transition times from this state.
            self.stamp.baseline = conditions_for(State.PENDING, Reason.FIRST_SEEN.value, "First seen",
                                                 self.app.generation, self.now, self.stamp.baseline)
            status.state = State.PENDING
        subject = Subject(self.app.body, settings, self.env.transform, self.env.profiles, self.env.clients,
                          self.env.cluster_id, on_transform=self.env.on_transform)
        self.found.subject = subject
        for row in ORDER:
            if isinstance(row, Step):
                early = row.run(self, subject)
                if early is not None:
                    return early
                continue
            refusal = row.run(subject)
            if refusal is not None:
                return self.refuse(refusal)
        reconciler, encoded, inventory = self.found.reconciler, subject.encoded, self.found.inventory
        assert reconciler is not None and encoded is not None and inventory is not None
        try:
            reconciler.analyzer = self.health_analyzer(subject)
        except health.ProfileHealthError as refused:
            return self.refuse(Refusal("health", State.ERROR, Reason.TRANSFORM_FAILED, str(refused), "transform",
                                       Requeue.INTERVAL))
        return _Admitted(reconciler, encoded, inventory, subject.policies)

    def health_analyzer(self, subject: Subject) -> health.ExpressionAnalyzer:
        """The status analyzer with the Application's health rules (docs/health.md#sources)."""
        rules = health.pass_rules(
            subject.policies.health_rules,
            health.definition_rules(subject.transform.pipeline.transformer.definitions, self.app.raw_spec),
            health.profile_rules(subject.profile_name, subject.profile))
        return health.ExpressionAnalyzer(DefaultStatusAnalyzer(self.domain, clock=self.env.clock), rules)

    def apply(self, admitted: _Admitted) -> _Applied | PassResult:
        """One call of the reconciler's ``apply`` with the inventory checkpoint, the drift it
        corrects or holds, and the inventory written back into the status."""
        status, inventory, encoded = self.status, admitted.inventory, admitted.encoded
        requested = self.app.annotations.get(f"{self.domain}/requested-at")
        if requested is not None and requested != status.last_handled_reconcile_at:
            for item in inventory:
                if item.phase is Phase.READY:
                    item.last_applied_at = None
            self.state.backoff.reset()
            status.last_handled_reconcile_at = requested

        digest = self.digests.current
        if self.held is None:
            waiting = self.run_hooks(HookPhase.PRE_APPLY)
            if waiting is not None:
                return waiting
            status.revision = upcoming_revision(status) or None
            status.last_processing_digest = status.processing_digest
        else:  # the applied revision again: its digest, no new revision (``keep_applied``)
            digest = status.last_processing_digest or digest

        drifted = self.prepare_drift(inventory, encoded.objects)
        before = dump_inventory(inventory)
        self.applying = True
        was_ready = status.state is State.READY
        try:
            done = admitted.reconciler.apply(
                inventory, encoded.objects, self.namespace, self.owner_id, digest,
                checkpoint=self.checkpoint_writer(encoded, len(before)),
                hold=[d.item.identity() for d in drifted if d.held_until and d.drift.deleted])
        except StatusNotWritten:
            # Nothing was created: end the pass as a checkpoint pass, and the kopf layer writes
            # the same status with its own retries and Warning.
            write_inventory(status, dump_inventory(inventory))
            self.summarise(inventory, encoded)
            self.processing()
            self.set_state(State.PROCESSING, Reason.PROCESSING, checkpoint_progress(len(inventory) - len(before)))
            return self.conclude(0.0, "progressing")
        except Exception as error:
            write_inventory(status, dump_inventory(inventory))
            self.summarise(inventory, encoded)
            return self.reconciler_error(error, deleting=False)
        after = dump_inventory(inventory)
        write_inventory(status, after)
        _, objects = self.summarise(inventory, encoded)
        self.conclude_drift(drifted)
        return _Applied(done, was_ready, len(before), len(after), after != before, objects,
                        dict(admitted.reconciler.report.operations))

    def verdict(self, admitted: _Admitted, applied: _Applied) -> PassResult:
        """Ready once everything is applied and the health checks pass; else still processing, with
        where the apply stands and when to look again."""
        status, operations = self.status, applied.operations
        states: list[fleet.ClusterState] = []
        if admitted.policies.topology is not None:
            states = self.cluster_states()
            status.clusters = [ClusterStatus.model_validate(state.to_json()) for state in states]
            status.cluster_summary = fleet.summary(states)
            failure = self.fleet_failure(states, rolling=admitted.policies.rollout is not None)
            if failure is not None:
                return failure
        if self.held is not None:
            return self.held_by(self.held, operations)
        unhealthy_object = self.failed_by_expression(admitted)
        if unhealthy_object is not None:
            self.set_state(State.ERROR, Reason.HEALTH_CHECK_FAILED, unhealthy_object)
            return self.conclude(self.state.error_backoff.next(Reason.HEALTH_CHECK_FAILED.value, self.interval),
                                 "error", error_type="other", operations=operations)
        if applied.done and admitted.policies.health_checks:
            client = self.env.clients.for_application(self.namespace, self.spec.service_account_name or "")
            analyzer = admitted.reconciler.analyzer
            try:
                unhealthy = orchestration.unhealthy(client, self.namespace, admitted.policies.health_checks, analyzer)
            except Exception as error:
                return self.reconciler_error(error, deleting=False)
            if unhealthy is not None:
                self.processing()
                return self.still_processing(unhealthy, self.state.backoff.next("Processing"), operations)
        if applied.done:
            waiting = self.run_hooks(HookPhase.POST_READY)
            if waiting is not None:
                return waiting
            applied_changed = status.applied_generation != self.app.generation
            status.applied_generation = self.app.generation
            if not applied.was_ready or applied_changed:
                status.last_applied_at = _second(self.now)
            status.processing_since = None
            self.state.backoff.reset()
            self.state.error_backoff.reset()
            revision = status.revision if status.revision is not None else 1
            ready = f"{applied.objects} objects"
            if admitted.policies.topology is not None:  # what a later rollout returns to (fleet.py)
                ready = f"{len(self.found.clusters or ())} clusters"
                for line in status.clusters or ():
                    line.ready_revision = revision
            if self.restoring is not None and status.rolled_back is not None:  # applied, but not the spec
                self.set_state(State.ERROR, Reason.ROLLED_BACK, status.rolled_back.message)
                return self.conclude(self.until_held_end(), "error", error_type="other", operations=operations)
            self.set_state(State.READY, Reason.READY, f"Applied revision {revision}: {ready} ready")
            return self.conclude(self.until_held_end(), "ready", operations=operations)
        if applied.changed:
            self.state.backoff.reset()
        self.state.error_backoff.reset()
        self.processing()
        report = admitted.reconciler.report
        bundle = admitted.encoded.bundle_of_wave(report.wave) if report.wave is not None else None
        bundle_ready, bundle_objects = self.bundle_counts(bundle.name if bundle else None)
        message = apply_progress(report, self.namespace, bundle.name if bundle else None, bundle_ready,
                                 bundle_objects, max(applied.items_after - applied.items_before, 0))
        if self.found.groups is not None and report.outcome != "checkpoint":
            message = fleet.rollout_progress(self.found.groups, states, status.revision or 0) or message
        delay = self.state.backoff.next("Processing")
        watched = self.env.watched
        if watched is not None and report.outcome == "waiting" and waits_for_wake_up(
                ((item.group, item.kind) for item, _ in report.pending), watched):
            delay = max(delay, WATCHED_WAIT)  # woken when they are ready (docs/operator.md#readiness-wake-ups)
        return self.still_processing(message, delay, operations)

    def failed_by_expression(self, admitted: _Admitted) -> str | None:
        """``<Kind> <name>: <verdict>`` of the first pending object a health rule calls Failed
        (docs/health.md#failed-means-error), else ``None``."""
        analyzer = getattr(admitted.reconciler, "analyzer", None)
        if not isinstance(analyzer, health.ExpressionAnalyzer) or not analyzer.failures:
            return None
        for item, _ in admitted.reconciler.report.pending:
            failure = analyzer.failure(item.group, item.kind, item.namespace, item.name)
            if failure is not None:
                where = item.name if item.namespace in ("", self.namespace) else f"{item.namespace}/{item.name}"
                return f"{item.kind} {where}: {failure}"
        return None

    # -- drift (docs/operator.md#drift) -----------------------------------------------------------

    def prepare_drift(self, inventory: list[InventoryItem], desired: Sequence[Mapping[str, Any]] = ()) -> list[Drifted]:
        """Before ``apply()``: the Ready objects that drifted and the written ones deleted.
        ``Correct``: they are re-applied in this call (forced), unless correction is held back;
        ``Report``: their reapply interval is held off while they drift. A deleted object is
        created again by ``apply()`` either way, unless its deletions are held back (``apply``'s
        ``hold``) or it ran to completion first (docs/operator.md#finished-jobs: it is
        ``Completed``). What the watch saw deleted may only have left its selector (its shard label
        taken off): being due, it is updated back into the watch. An object this process never
        wrote is compared with its ``desired`` manifest once (``OwnedObjects.unverified_drift``):
        an edit made while no instance watched is drift too."""
        probe = self.env.drift
        if probe is None:
            return []
        first_sight = self.env.unverified_drift
        manifests = _by_identity(desired, self.namespace) if first_sight is not None else {}
        now, tracker, report = self.now, self.state.drift, self.reports_drift
        reapply = self.settings.reapply_interval_duration
        found = []
        for item in inventory:
            if item.phase not in _WRITTEN:
                continue
            drift = probe(item.group, item.kind, item.namespace, item.name)
            manifest = manifests.get(item.identity()) if item.phase is Phase.READY else None
            if drift is None and first_sight is not None and manifest is not None:
                drift = first_sight(item.group, item.kind, item.namespace, item.name, manifest)
            if drift is None or (not drift.deleted and item.phase is not Phase.READY):
                continue
            if drift.deleted and (drift.completed or finished(item)):
                item.mark_completed()
                continue
            held = tracker.held_until(item.identity(), now) if drift.deleted or not report else None
            if report or held is not None:
                if not drift.deleted and item.last_applied_at is not None and item.last_applied_at <= now - reapply:
                    item.last_applied_at = _second(now)  # left as it is: the interval does not undo it
            else:
                item.last_applied_at = None  # due now: the reconciler applies it, forced (or creates it)
            found.append(Drifted(item, drift, held))
        return found

    def conclude_drift(self, found: list[Drifted]) -> None:
        """After ``apply()``: what was corrected (an Event, the metric, the fight count) and what is
        left drifting (``status.drift``, the ``Drifted`` condition, an Event per episode)."""
        now, tracker = self.now, self.state.drift
        corrected, left = [], []
        for found_one in found:
            restored = found_one.held_until is None and (found_one.drift.deleted or not self.reports_drift)
            if not restored:
                left.append(found_one)
                continue
            held = tracker.corrected(found_one.item.identity(), now)  # created again counts as a correction
            if self.reports_drift:  # a deleted object, created again under Report too, and shown
                left.append(found_one if held is None else Drifted(found_one.item, found_one.drift, held))
                continue
            corrected.append(found_one)
            if held is not None:
                left.append(Drifted(found_one.item, found_one.drift, held))
        tracker.settled(now)
        if corrected:
            self.events.append(Event("Normal", "DriftCorrected", corrected_message(corrected, self.namespace)))
        previous = _episode(self.status.drift)
        self.status.drift = [d.status() for d in left] or None
        if not left:
            self.drift_found = _DriftFound(len(corrected), None)
            return
        reason, message = drifted_condition(left, self.namespace, now, self.drift_left_because())
        self.drift_found = _DriftFound(len(corrected), (reason, message.replace("\n", " ")[:MAX_MESSAGE]))
        if _episode(self.status.drift) != previous:
            self.events.append(Event("Warning", reason, message))

    def drift_left_because(self) -> str:
        """Why drift is left as it is: the spec's ``drift: Report``, else closed change windows."""
        if self.spec.drift == DriftPolicy.REPORT.value or self.window is None:
            return REPORTED
        return WINDOW_REPORTED

    def seen_completed(self, ref: ObjectRef) -> bool:
        """The reconciler's question before it creates an absent Job again: did the watch see it
        deleted after it completed (docs/operator.md#finished-jobs)? Asked at that moment, it
        also covers a deletion between ``prepare_drift`` and the read that found the Job gone."""
        probe = self.env.drift
        drift = probe(ref.group, ref.kind, ref.namespace, ref.name) if probe is not None else None
        return drift is not None and drift.completed

    def until_held_end(self) -> float:
        """A Ready pass's delay: the interval, or less when a held correction resumes sooner (no
        watch event comes for an object held deleted) or closed change windows that leave drift
        reported may open (then it is corrected)."""
        ends = [entry.held_until for entry in self.status.drift or [] if entry.held_until is not None]
        if self.window is not None:
            ends.append(self.window.wake_at)
        if not ends:
            return self.interval
        return max(0.0, min(self.interval, (min(ends) - self.now).total_seconds()))

    @property
    def reports_drift(self) -> bool:
        """``spec.drift: Report``, or closed change windows with ``driftWhileClosed: Report``: drift
        is left and shown, not corrected."""
        return self.spec.drift == DriftPolicy.REPORT.value or self.window is not None

    def fleet_failure(self, states: list[fleet.ClusterState], *, rolling: bool) -> PassResult | None:
        """A halted rollout is ``Error``/``RolloutHalted``; without a rollout policy (``rolling``) a
        cluster that failed the current revision is ``Error``/``ClusterFailed``, naming it."""
        halt = self.found.halt
        if halt is not None:
            self.set_state(State.ERROR, Reason.ROLLOUT_HALTED, halt.verdict())
            return self.conclude(self.state.error_backoff.next(Reason.ROLLOUT_HALTED.value, self.interval), "error",
                                 error_type="other")
        if rolling:
            return None
        revision = self.status.revision or 0
        failed = fleet.failed({state.cluster: state for state in states}, [s.cluster for s in states], revision)
        if failed is None:
            return None
        self.set_state(State.ERROR, Reason.CLUSTER_FAILED, f"Cluster {failed.cluster} failed: {failed.why}")
        return self.conclude(self.state.error_backoff.next(Reason.CLUSTER_FAILED.value, self.interval), "error",
                             error_type="other")

    def still_processing(self, message: str, delay: float, operations: dict[str, int]) -> PassResult:
        """``Processing`` with ``message``, or ``Error``/``Timeout`` once processing took longer
        than the timeout — except with a topology policy: each cluster Application times out on
        its own, and its failure is the fleet Application's verdict (``fleet_failure``)."""
        if self.topology is None and self.timed_out():
            timed_out = f"Reconciliation timed out after {self.timeout_text}: {message}"
            self.set_state(State.ERROR, Reason.TIMEOUT, timed_out)
            return self.conclude(delay, "error", error_type="other", operations=operations)
        self.set_state(State.PROCESSING, Reason.PROCESSING, message)
        return self.conclude(delay, "progressing", operations=operations)

    def checkpoint_writer(self, encoded: EncodedTree, known: int) -> Checkpoint | None:
        """The reconciler's in-call checkpoint (docs/operator.md#the-apply-branch): the status a
        checkpoint pass would end with, written before any new object is created, so one pass
        records and creates (and the second read of the new objects is saved).

        Its rendering leaves the pass's outcome untouched: the epilogue stamps it again."""
        checkpointer = self.checkpointer
        if checkpointer is None:
            return None

        def checkpoint(items: Sequence[InventoryItem]) -> None:
            recorded = list(items)
            write_inventory(self.status, dump_inventory(recorded))
            self.summarise(recorded, encoded)
            self.processing()
            verdict = self.stamp.verdict
            self.set_state(State.PROCESSING, Reason.PROCESSING, checkpoint_progress(len(recorded) - known))
            rendered = self.render(PassResult({}, None, "progressing")).status
            self.stamp.verdict = verdict
            checkpointer.checkpoint(rendered)

        return checkpoint

    def summarise(self, inventory: list[InventoryItem], encoded: EncodedTree) -> tuple[int, int]:
        """Count the objects (for the epilogue) and fill ``bundles``; return (ready, objects)."""
        ready = sum(1 for item in inventory if _is_ready(item))
        self.stamp.counts = (len(inventory), ready)
        bundles = []
        all_before_ready = True
        for plan in encoded.bundles:
            members = [i for i in inventory if plan.holds(i.group, i.kind, i.namespace, i.name, self.namespace)]
            bundle_ready = sum(1 for item in members if _is_ready(item))
            complete = bundle_ready == plan.objects
            state = BundleState.READY if complete else (
                BundleState.APPLYING if all_before_ready else BundleState.PENDING)
            all_before_ready = all_before_ready and complete
            bundles.append(BundleStatus(name=plan.name, depends_on=list(plan.depends_on), objects=plan.objects,
                                        ready=bundle_ready, state=state,
                                        waves=Waves(first=plan.first_wave, last=plan.last_wave)))
        self.status.bundles = bundles
        return ready, len(inventory)

    def bundle_counts(self, bundle: str | None) -> tuple[int, int]:
        """(ready, objects) of ``bundle`` from the summary ``summarise`` just wrote."""
        for entry in self.status.bundles or []:
            if entry.name == bundle:
                return entry.ready, entry.objects
        return 0, 0

    # -- the delete branch (docs/operator.md#the-delete-branch) ---------------------------------------------

    def delete_branch(self) -> PassResult:
        """The delete branch leaves ``observedGeneration`` as it was: deletion is no new spec."""
        self.deleting = True
        self.env.transform.forget(self.namespace, self.name)  # it reads no URL source any more
        status = self.status
        if self.app.annotations.get(f"{self.domain}/abandon") == "true":
            write_inventory(status, [])
            return self.conclude(None, "deleted", finished=True,
                               events=[Event("Warning", "Abandoned", "Objects left in place; inventory dropped")])
        status.processing_digest = None
        status.revision_digest = None
        status.processing_since = None
        try:
            inventory = self.found.inventory = inventory_of(status)
        except CompactInventoryError as error:
            return self.fail(Reason.ERROR, capitalised(str(error)), error_type="other")
        if not inventory and not self.deletion_hooks() and not status.hooks:
            return self.conclude(None, "deleted", finished=True)
        waiting = self.deliver_deletion()
        if waiting is not None:
            return waiting
        blocked = orchestration.dependants_blocking(self.env.apps, AppRef(self.namespace, self.name),
                                                    self.app.annotations, self.domain)
        if blocked is not None:
            self.set_state(State.DELETING, Reason.DELETION_BLOCKED, blocked)
            return self.conclude(1.0 + self.state.backoff.next("DeletionBlocked"), "pending")
        client, terminating = self.deletion_client()
        reconciler = self.found.reconciler = self.reconciler(client)
        before = dump_inventory(inventory)
        try:
            allowed, reason = reconciler.is_deletion_allowed(inventory, self.owner_id)
            if not allowed:
                self.set_state(State.DELETING, Reason.DELETION_BLOCKED, f"Deletion blocked: {reason}")
                return self.conclude(1.0 + self.state.backoff.next("DeletionBlocked"), "pending")
            foreign = sorted(f for f in self.app.finalizers if f != self.domain)
            if foreign:
                self.set_state(State.DELETING, Reason.DELETION_BLOCKED,
                               f"Deletion blocked due to existing foreign finalizers: {', '.join(foreign)}")
                return self.conclude(1.0 + self.state.backoff.next("DeletionBlocked"), "pending")
            held = self.run_hooks(HookPhase.PRE_DELETE)
            if held is not None:
                return held
            done = reconciler.delete(inventory, self.owner_id)
            if done:
                held = self.run_hooks(HookPhase.POST_DELETE)
                if held is not None:
                    return held
                self.hook_runner().clean_up()
        except Exception as error:
            write_inventory(status, dump_inventory(inventory))
            return self.reconciler_error(error, deleting=True)
        after = dump_inventory(inventory)
        write_inventory(status, after)
        self.stamp.counts = (len(inventory), sum(1 for item in inventory if _is_ready(item)))
        operations = dict(reconciler.report.operations)
        if done:
            return self.conclude(None, "deleted", finished=True, operations=operations)
        if after != before:
            self.state.backoff.reset()
        message = delete_progress(reconciler.report, self.namespace)
        if terminating:
            message = f"{NAMESPACE_TERMINATING.format(namespace=self.namespace)}: {message}"
        self.set_state(State.DELETING, Reason.DELETION_PROCESSING, message)
        return self.conclude(self.state.backoff.next("DeletionProcessing"), "progressing", operations=operations)


def apply_pass(body: Application | Mapping[str, Any], memory: Memory, env: Environment,
               checkpointer: Checkpointer | None = None) -> PassResult:
    """One run of the apply branch (docs/operator.md#the-apply-branch) for an Application not
    being deleted; ``checkpointer`` writes its in-call checkpoint (without one the checkpoint
    ends the pass, the reconciler's default)."""
    p = _Pass(body, memory, env, checkpointer)
    before = timeline.Before.of(p.status)
    outcome = p.apply_branch()
    outcome.confirms, outcome.unconfirmed = p.confirms(outcome)
    seen = env.generation_seen(p.app.uid, p.app.generation) if env.generation_seen is not None else None
    outcome.traced = timeline.observe(p.status, p.found.inventory, before, timeline.PassFacts(
        p.app.uid, p.namespace, p.name, p.app.generation, p.now, env.clock(), outcome.outcome, p.applying,
        sum(outcome.operations.values()), env.tracing, seen))  # docs/operator.md#the-timeline
    return p.finish(outcome)


def delete_pass(body: Application | Mapping[str, Any], memory: Memory, env: Environment,
                checkpointer: Checkpointer | None = None) -> PassResult:
    """One run of the delete branch (docs/operator.md#the-delete-branch); ``checkpointer`` records
    a hook's run before its object is created (without one that record ends the pass)."""
    p = _Pass(body, memory, env, checkpointer)
    return p.finish(p.delete_branch())


def compatible_digests(status: dict[str, Any], legacy: str) -> dict[str, Any]:
    """The status as written: ``processingDigest`` holds the previous release's digest of the
    input being processed (with the generation, ``legacy_component_digest``), and so does
    ``lastProcessingDigest`` once that input is settled; this version's digest is in
    ``revisionDigest``. That release, after a downgrade, sees the input it would have seen and
    restarts nothing (docs/chart.md#upgrades). Read back by ``restart_on_change``."""
    digest = status.get("processingDigest")
    if legacy and digest:
        status["revisionDigest"] = digest
        if status.get("lastProcessingDigest") == digest:
            status["lastProcessingDigest"] = legacy
        status["processingDigest"] = legacy
    return status


def _by_identity(objects: Sequence[Mapping[str, Any]],
                 namespace: str) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    """The desired manifests by (group, kind, namespace, name); a namespaced object without a
    namespace is the Application's (a cluster-scoped one is found under both)."""
    found: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        kind, name = str(obj.get("kind") or ""), str(meta.get("name") or "")
        own = str(meta.get("namespace") or "")
        found[(group, kind, own, name)] = obj
        if not own:
            found.setdefault((group, kind, namespace, name), obj)
    return found
