"""The object reconciler: ``apply()``, ``delete()`` and ``is_deletion_allowed()``
(docs/reconciler.md#the-apply-algorithm, docs/reconciler.md#deletion, docs/reconciler.md#deletion-checks).

A library with no kopf dependency. All state lives in the inventory the caller passes in and
persists after every call; the reconciler keeps only its configuration and the report of its
last call. Work that touches the cluster is bounded-concurrent within a wave
(docs/reconciler.md#concurrency-and-rate-limiting), but the
inventory is only ever changed by the calling thread, in object order, so results equal those
of sequential processing.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from ..common.dns1123 import is_dns1123_subdomain
from .annotations import AnnotationDefaults, annotation_keys
from .client import ClusterClient
from .completion import RUNS_TO_COMPLETION, finished
from .discovery import ApiResource
from .errors import (
    ApiError,
    InconsistentStateError,
    ObjectValidationError,
    OwnershipConflictError,
)
from .events import EventRecorder
from .identity import ONCE_DIGEST, group_kind_string, hash_owner_id, manifest_hash
from .inventory import DELETION_PHASES, InventoryItem, Phase, index_items, sort_for_deletion
from .objectpolicies import AdoptionPolicy, DeletePolicy, MissingNamespacesPolicy, ReconcilePolicy, UpdatePolicy
from .objects import API_SERVICE, CRD, NAMESPACE, DesiredObject, ObjectRef, prepare_objects
from .operations import Operations, OpsCounters, is_terminating, owner_label
from .options import ReconcilerOptions
from .plan import PlannedObject, stamped, with_finalizer
from .priorities import apply_priority
from .reads import Answer, ReadCache, ReadTarget
from .report import CallReport, Outcome
from .status import DefaultStatusAnalyzer, StatusAnalysisError, StatusAnalyzer
from .typeinfo import TypeVersionInfo, group_matches

__all__ = ["Checkpoint", "Reconciler"]

Checkpoint = Callable[[Sequence[InventoryItem]], None]
"""Persists the inventory of an ``apply()`` call that recorded new items, before the call
creates any object (docs/reconciler.md#in-call-checkpoint). It receives copies of the items."""

log = logging.getLogger("oam_operator.reconciler")

_SETTLED = frozenset({Phase.READY, Phase.COMPLETED})
_WRITTEN = frozenset({Phase.CREATING, Phase.UPDATING, Phase.READY})  # written with the item's digest

Identity = tuple[str, str, str, str]


def _validate_name(name: str) -> None:
    reason = ""
    if len(name) > 253:
        reason = "must be no more than 253 characters"
    elif not is_dns1123_subdomain(name):
        reason = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    if reason:
        raise ValueError(f"invalid reconciler name {name}: {reason}")


def item_ref(item: InventoryItem) -> ObjectRef:
    return ObjectRef(item.group, item.version, item.kind, item.namespace, item.name)


def _identity(ref: ObjectRef) -> Identity:
    return (ref.group, ref.kind, ref.namespace, ref.name)


def _unchanged(written: Mapping[str, Any], live: Mapping[str, Any]) -> bool:
    """Whether a write's response is the object as read: the API server skips a write that changes
    nothing and answers with the same resourceVersion."""
    version = str((written.get("metadata") or {}).get("resourceVersion") or "")
    return bool(version) and version == str((live.get("metadata") or {}).get("resourceVersion") or "")


@dataclass
class _Result:
    """What a worker learned about one object; applied to the inventory by the caller."""

    phase: Phase
    status: str
    last_applied_at: datetime | None
    ready: bool
    detail: str


@dataclass
class _Call:
    """State of one call."""

    ops: Operations
    reads: ReadCache
    counters: OpsCounters
    pending: list[tuple[InventoryItem, str]]
    wave: int | None = None
    checkpointed: bool = False


_ADOPTION_ORDER = (AdoptionPolicy.NEVER, AdoptionPolicy.IF_UNOWNED, AdoptionPolicy.ALWAYS)


def _narrower(policy: AdoptionPolicy, cap: AdoptionPolicy) -> AdoptionPolicy:
    """The narrower of two adoption policies (``Never`` < ``IfUnowned`` < ``Always``)."""
    return min(policy, cap, key=_ADOPTION_ORDER.index)


class Reconciler:
    """Keeps a set of objects in the desired state, in waves, tracked by an inventory."""

    def __init__(self, name: str, client: ClusterClient, options: ReconcilerOptions | None = None) -> None:
        _validate_name(name)
        options = options or ReconcilerOptions()
        options.validate()
        self.name = name
        self.client = client
        self.options = options
        self.field_owner = options.field_owner or name
        self.finalizer = options.finalizer or name
        self.keys = annotation_keys(name)
        builtin = AnnotationDefaults()
        self.defaults = AnnotationDefaults(
            adoption_policy=options.adoption_policy or builtin.adoption_policy,
            update_policy=options.update_policy or builtin.update_policy,
            delete_policy=options.delete_policy or builtin.delete_policy,
            reapply_interval=(
                builtin.reapply_interval if options.reapply_interval is None else options.reapply_interval
            ),
        )
        self.missing_namespaces_policy = options.missing_namespaces_policy or MissingNamespacesPolicy.CREATE
        self.analyzer: StatusAnalyzer = options.status_analyzer or DefaultStatusAnalyzer(name, clock=options.clock)
        self.enable_events = True if options.enable_events is None else options.enable_events
        self._report = CallReport(outcome="done")

    @property
    def report(self) -> CallReport:
        """The report of the last call (docs/reconciler.md#the-report-of-the-last-call)."""
        return self._report

    # -- plumbing -----------------------------------------------------------------------------

    def _new_call(self, owner_id: str) -> _Call:
        counters = OpsCounters()
        ops = Operations(
            client=self.client,
            field_owner=self.field_owner,
            finalizer=self.finalizer,
            owner_id=owner_id,
            hashed_owner_id=hash_owner_id(owner_id),
            owner_key=self.keys["owner-id"],
            digest_key=self.keys["digest"],
            field_validation=self.options.field_validation,
            reclaimed_field_managers=self.options.reclaimed_field_managers,
            metrics=self.options.metrics,
            events=EventRecorder(self.client, self.name, self.enable_events, self.options.clock),
            counters=counters,
            on_written=self.options.on_written,
            extra_label_keys=tuple(self.options.extra_labels),
        )
        reads = ReadCache(
            ops,
            enabled=self.options.batch_reads,
            threshold=self.options.batch_read_threshold,
            concurrency=self.options.concurrency,
            watch=self.options.cached_reads,
        )
        return _Call(ops=ops, reads=reads, counters=counters, pending=[])

    def _run(self, call: _Call, body: Callable[[], Outcome]) -> Outcome:
        outcome: Outcome = "error"
        try:
            outcome = body()
            return outcome
        finally:
            # The call's Events go out in the background now that its own requests are done,
            # so they never hold up a wave (docs/reconciler.md#events-on-dependent-objects; see events.py).
            call.ops.events.flush()
            self._report = CallReport(
                outcome=outcome,
                wave=call.wave,
                pending=tuple((item.detached(), detail) for item, detail in call.pending),
                operations=dict(call.counters.operations),
                conflicts=tuple(call.counters.conflicts),
                checkpointed=call.checkpointed,
            )

    def _managed_matcher(self, items: Sequence[InventoryItem]) -> Callable[[str, str, str], bool]:
        """docs/reconciler.md#classification: an instance of an additional managed type or of any item's
        managedTypes."""
        types: list[TypeVersionInfo] = [t for item in items for t in item.managed_types]
        extra = list(self.options.additional_managed_types)

        def is_managed(group: str, version: str, kind: str) -> bool:
            return any(t.matches(group, kind) for t in extra) or any(t.matches(group, version, kind) for t in types)

        return is_managed

    def _digest(self, d: DesiredObject, component_digest: str) -> str:
        policy = d.annotations.reconcile_policy
        if policy is ReconcilePolicy.ONCE:
            return ONCE_DIGEST
        digest = manifest_hash(d.manifest)
        if policy is ReconcilePolicy.ON_OBJECT_OR_COMPONENT_CHANGE:
            digest = f"{digest}@{component_digest}"
        return digest

    def _adoption_refusal(
        self, policy: AdoptionPolicy, live: Mapping[str, Any], key: str, ops: Operations, cluster_scoped: bool = False
    ) -> OwnershipConflictError | None:
        """docs/reconciler.md#adoption-policy: ``None`` when the object may be taken over (or is ours).

        A cluster-scoped object is shared by every tenant — a Namespace above all, whose
        deletion takes its whole content — and whoever writes an object's annotations is not
        the one who decides what may be taken from another tenant
        (docs/operator.md#identity-hostile-input-and-limits). So for one its own policy is capped by
        ``cluster_scoped_adoption_policy`` (the caller's setting, ``Never`` unless raised): the
        annotation may narrow it, never widen it. The refusals say when the cap decided.
        """
        label = owner_label(live, self.keys["owner-id"])
        if label == ops.hashed_owner_id:
            return None
        effective = _narrower(policy, self.options.cluster_scoped_adoption_policy) if cluster_scoped else policy
        if effective is AdoptionPolicy.ALWAYS:
            return None
        cap = self.options.cluster_scoped_adoption_policy.value
        if not label:
            if effective is AdoptionPolicy.IF_UNOWNED:
                return None
            if effective is not policy:
                return OwnershipConflictError(
                    f"found existing cluster-scoped object {key} without owner; the adoption policy for "
                    f"cluster-scoped objects ({cap}) does not allow adopting it", object_key=key)
            return OwnershipConflictError(f"found existing object {key} without owner", object_key=key)
        message = f"owner conflict; object {key} is owned by {ops.foreign_owner(live)}"
        if effective is not policy and policy is AdoptionPolicy.ALWAYS:
            message += f"; the adoption policy for cluster-scoped objects ({cap}) does not allow taking it over"
        return OwnershipConflictError(message, object_key=key)

    # -- apply --------------------------------------------------------------------------------

    def apply(
        self,
        inventory: list[InventoryItem],
        objects: Sequence[Mapping[str, Any]],
        namespace: str,
        owner_id: str,
        component_digest: str,
        *,
        checkpoint: Checkpoint | None = None,
        hold: Collection[Identity] = frozenset(),
    ) -> bool:
        """Bring the cluster to ``objects`` (docs/reconciler.md#the-apply-algorithm); ``True`` when everything is
        applied, ready, purged and pruned. ``inventory`` is updated in place; persist it after every call.

        Without ``checkpoint``, a call that records new items returns ``False`` before creating
        anything, for the caller to persist them. With it, the call persists them through
        ``checkpoint`` and goes on in the same call (docs/reconciler.md#in-call-checkpoint).
        ``hold`` names objects (group, kind, namespace, name) this call neither reads nor writes
        (docs/reconciler.md#held-objects)."""
        call = self._new_call(owner_id)
        return self._run(
            call, lambda: self._apply(call, inventory, objects, namespace, component_digest, checkpoint, hold)
        ) == "done"

    def _prepare(self, objects: Sequence[Mapping[str, Any]], namespace: str) -> list[DesiredObject]:
        """Steps 1-7: the validated, defaulted desired objects (shared by ``apply`` and ``plan``)."""
        return prepare_objects(
            objects,
            name=self.name,
            namespace=namespace,
            client=self.client,
            defaults=self.defaults,
            allowed_namespaces=self.options.allowed_namespaces,
            allow_cluster_scoped=self.options.allow_cluster_scoped,
            extra_labels=self.options.extra_labels,
        )

    def plan(
        self, objects: Sequence[Mapping[str, Any]], namespace: str, owner_id: str, component_digest: str
    ) -> list[PlannedObject]:
        """The objects ``apply()`` would write, stamped as it writes them, in apply order (no write;
        discovery only). Raises what ``apply()`` raises for an invalid object set (steps 1–7)."""
        desired = self._prepare(objects, namespace)
        ordered = sorted(desired, key=lambda d: (d.annotations.apply_order, apply_priority(d.ref.group_kind)))
        planned = []
        for d in ordered:
            body = stamped(d.manifest, owner_key=self.keys["owner-id"], hashed_owner_id=hash_owner_id(owner_id),
                           owner_id=owner_id, digest_key=self.keys["digest"], digest=self._digest(d, component_digest))
            if d.ref.is_type_provider:
                body = with_finalizer(body, self.finalizer)
            planned.append(PlannedObject(d.annotations.apply_order, d.ref, d.resource, body))
        return planned

    def _apply(
        self,
        call: _Call,
        inventory: list[InventoryItem],
        objects: Sequence[Mapping[str, Any]],
        namespace: str,
        component_digest: str,
        checkpoint: Checkpoint | None = None,
        hold: Collection[Identity] = frozenset(),
    ) -> Outcome:
        ops = call.ops
        # Steps 1-7 (and docs/reconciler.md#target-confinement).
        desired = self._prepare(objects, namespace)

        # Step 8: the new inventory, on a copy. New objects are read and adoption-checked;
        # with enough of them in one (type, namespace), one unfiltered LIST reads them all,
        # foreign and unlabelled objects included, exactly as GETs would (docs/reconciler.md#batched-reads, reads.py).
        work = [item.detached() for item in inventory]
        index = index_items(work)
        for d in desired:
            d.digest = self._digest(d, component_digest)
        new = [d for d in desired if _identity(d.ref) not in index]
        adopted_namespaces: set[Any] = set()
        # A watch the caller holds may answer "absent" for most of them without a request: their
        # create is refused when they exist after all (docs/reconciler.md#reads-from-a-watch).
        call.reads.prefetch([ReadTarget(d.ref, None) for d in new], from_watch=True)
        outcomes = self.client.run_bounded([partial(call.reads.answer, d.ref) for d in new], self.options.concurrency)
        answers: list[Answer] = []
        for d, outcome in zip(new, outcomes, strict=True):
            if outcome.error is not None:
                raise outcome.error
            assert outcome.value is not None
            answers.append(outcome.value)
            live = outcome.value.obj
            if live is not None:
                refusal = self._adoption_refusal(d.annotations.adoption_policy, live, d.key, ops,
                                                 cluster_scoped=not d.ref.namespace)
                if refusal is not None:
                    raise refusal
                if (d.ref.group, d.ref.kind) == NAMESPACE and not ops.is_ours(live):
                    adopted_namespaces.add(_identity(d.ref))
        added = 0
        items_of: dict[int, InventoryItem] = {}
        for d in desired:
            item = index.get(_identity(d.ref))
            if item is None:
                item = InventoryItem.model_validate({})
                work.append(item)
                index[_identity(d.ref)] = item
                added += 1
            a = d.annotations
            item.group, item.version, item.kind = d.ref.group, d.ref.version, d.ref.kind
            item.namespace, item.name = d.ref.namespace, d.ref.name
            item.adoption_policy, item.reconcile_policy = a.adoption_policy, a.reconcile_policy
            item.update_policy, item.delete_policy = a.update_policy, a.delete_policy
            item.apply_order, item.delete_order = a.apply_order, a.delete_order
            item.managed_types = list(d.managed_types)
            if item.digest != d.digest:
                item.schedule_application(d.digest)
            if _identity(d.ref) in adopted_namespaces:
                item.adopted = True  # never deleted: it was not created for this owner
                                     # (docs/operator.md#identity-hostile-input-and-limits)
            if item.adopted:
                item.delete_policy = DeletePolicy.ORPHAN
            items_of[d.index] = item

        # Step 9: items no longer desired.
        wanted = {_identity(d.ref) for d in desired}
        for item in work:
            if item.identity() not in wanted and item.digest != "":
                item.schedule_deletion()

        # Step 10: the object set must be consistent.
        self._validate_set(work)

        # Step 11: commit; a new item is persisted before its object is ever created.
        inventory[:] = sort_for_deletion(work)
        if added:
            if checkpoint is None:
                call.pending.extend((item, item.phase.value) for item in inventory if item.phase)
                return "checkpoint"
            # docs/reconciler.md#in-call-checkpoint: persisted by the caller now, before any
            # object is created; an exception from it ends the call with nothing created.
            checkpoint(tuple(item.detached() for item in inventory))
            call.checkpointed = True
            # What step 8 read as absent is not read again: a create is refused (409) when the
            # object appeared since, so the adoption check cannot be bypassed.
            # What the watch answered is asked of it again in the wave.
            call.reads.remember_absent(
                d.ref for d, answer in zip(new, answers, strict=True) if answer.obj is None and not answer.from_watch
            )

        # Step 12: missing namespaces, unless nothing will be created in this call.
        if self.missing_namespaces_policy is MissingNamespacesPolicy.CREATE and any(
            items_of[d.index].phase not in _SETTLED for d in desired
        ):
            self._create_missing_namespaces(ops, desired)

        # Step 13: apply order, then kind priority; ties keep the input order.
        ordered = sorted(desired, key=lambda d: (d.annotations.apply_order, apply_priority(d.ref.group_kind)))

        # Step 14: finish due completions (purges).
        if self._complete_purges(call, inventory):
            return "purging"

        # Step 15: apply waves.
        stopped = self._apply_waves(call, inventory, ordered, items_of, hold)
        if stopped is not None:
            return stopped
        call.wave = None

        # Step 16: delete redundant objects in delete waves.
        return "pruning" if self._prune(call, inventory) else "done"

    def _validate_set(self, items: Sequence[InventoryItem]) -> None:
        """docs/reconciler.md#steps-of-an-apply-call: managed instances and namespaced objects against their
        type/namespace."""

        def check(i: InventoryItem, t: InventoryItem, what: str, of: str) -> None:
            problem = ""
            if i.apply_order < t.apply_order:
                problem = f"{what} must not have an apply order lesser than the one of its {of}"
            elif i.delete_order > t.delete_order:
                problem = f"{what} must not have a delete order greater than the one of its {of}"
            elif i.digest != "" and t.digest == "":
                problem = f"{what} is not being deleted, but the {'managing type' if of == 'type' else of} is"
            if problem:
                raise ObjectValidationError(f"error validating object set ({i.key}): {problem}", object_key=i.key)

        for t in items:
            if t.managed_types:
                for i in items:
                    if i is not t and i.is_managed_by(t.managed_types):
                        check(i, t, "managed instance", "type")
        for n in items:
            if (n.group, n.kind) == NAMESPACE:
                for i in items:
                    if i is not n and i.namespace == n.name:
                        check(i, n, "namespaced object", "namespace")

    def _create_missing_namespaces(self, ops: Operations, desired: Sequence[DesiredObject]) -> None:
        declared = {d.ref.name for d in desired if (d.ref.group, d.ref.kind) == NAMESPACE}
        allowed = self.options.allowed_namespaces
        seen: list[str] = []
        for d in desired:
            ns = d.ref.namespace
            if ns and ns not in declared and ns not in seen and (allowed is None or ns in allowed):
                seen.append(ns)
        for ns in seen:
            ops.ensure_namespace(ns)

    def _complete_purges(self, call: _Call, inventory: Sequence[InventoryItem]) -> bool:
        """docs/reconciler.md#waves; True when purges are still pending."""
        ops = call.ops
        pending = False
        for item in inventory:
            if item.phase not in (Phase.SCHEDULED_FOR_COMPLETION, Phase.COMPLETING):
                continue
            ref = item_ref(item)
            live = ops.read(ref)
            if item.phase is Phase.SCHEDULED_FOR_COMPLETION:
                if live is not None and not ops.is_ours(live):
                    ops.report_conflict(ref, live)
                    item.mark_completed()
                    continue
                ops.delete(ref, live)
                item.mark_completing()
                pending = True
                call.pending.append((item, item.phase.value))
            elif live is None:
                item.mark_completed()
            else:
                pending = True
                call.pending.append((item, item.phase.value))
        return pending

    def _apply_waves(
        self,
        call: _Call,
        inventory: Sequence[InventoryItem],
        ordered: Sequence[DesiredObject],
        items_of: Mapping[int, InventoryItem],
        hold: Collection[Identity] = frozenset(),
    ) -> Outcome | None:
        """docs/reconciler.md#waves; an outcome when the call must stop, ``None`` when every wave is ready.
        A held object (docs/reconciler.md#held-objects) is passed over: its item stays as it is,
        ready when it is settled, else pending."""
        is_managed = self._managed_matcher(inventory)
        waves = [
            (order, list(group)) for order, group in itertools.groupby(ordered, lambda d: d.annotations.apply_order)
        ]
        done_so_far: list[DesiredObject] = []
        for position, (order, wave) in enumerate(waves):
            call.wave = order
            log.debug("wave %d start", order, extra={"wave": order})

            def klass(d: DesiredObject) -> str:
                if is_managed(d.ref.group, d.ref.version, d.ref.kind):
                    return "managed"
                return "late" if (d.ref.group, d.ref.kind) == API_SERVICE else "regular"

            unsettled = [d for d in wave if items_of[d.index].phase not in _SETTLED]
            regular_pending = sum(1 for d in unsettled if klass(d) == "regular")
            late_pending = sum(1 for d in unsettled if klass(d) == "late")
            unready = False
            eligible: list[DesiredObject] = []
            for d in wave:
                item = items_of[d.index]
                if item.phase is Phase.COMPLETED:
                    continue
                if _identity(d.ref) in hold:
                    if item.phase not in _SETTLED:
                        unready = True
                        call.pending.append((item, item.phase.value))
                    continue
                k = klass(d)
                if (
                    k == "regular"
                    or (k == "late" and regular_pending == 0)
                    or (k == "managed" and regular_pending == 0 and late_pending == 0)
                ):
                    eligible.append(d)
                else:
                    unready = True
                    call.pending.append((item, item.phase.value))
            call.reads.prefetch([ReadTarget(d.ref, items_of[d.index]) for d in eligible], from_watch=True)
            for _, level_iter in itertools.groupby(eligible, lambda d: apply_priority(d.ref.group_kind)):
                level = list(level_iter)
                outcomes = self.client.run_bounded(
                    [partial(self._process, call, d, items_of[d.index].detached()) for d in level],
                    self.options.concurrency,
                )
                first_error: Exception | None = None
                for d, outcome in zip(level, outcomes, strict=True):
                    item = items_of[d.index]
                    if outcome.error is not None:
                        if first_error is None:
                            first_error = outcome.error
                        else:
                            log.warning("error processing %s: %s", d.key, outcome.error)
                        continue
                    result = outcome.value
                    assert result is not None
                    item.phase, item.status, item.last_applied_at = result.phase, result.status, result.last_applied_at
                    if not result.ready:
                        unready = True
                        call.pending.append((item, result.detail))
                if first_error is not None:
                    raise first_error
            done_so_far.extend(wave)
            log.debug("wave %d end (ready=%s)", order, not unready, extra={"wave": order})
            if unready:
                return "waiting"
            last = position == len(waves) - 1
            scheduled = False
            for d in done_so_far:
                item = items_of[d.index]
                a = d.annotations
                if item.phase is not Phase.COMPLETED and (a.purge_order <= order or (last and a.has_purge_order)):
                    item.schedule_completion()
                    call.pending.append((item, item.phase.value))
                    scheduled = True
            if scheduled:
                return "purging"
        return None

    def _process(self, call: _Call, d: DesiredObject, item: InventoryItem) -> _Result:
        """docs/reconciler.md#waves for one object, on a copy of its item (runs in a worker thread).

        The one read is the wave's (``call.reads``: the caller's watch, a LIST result or a GET,
        docs/reconciler.md#reads-from-a-watch and #batched-reads); an answer of the watch is read
        live again before a write (``_settle``). There is no read after a write, and the object
        a create or update returns is deliberately *not* used as the live object of a status step:

        - In this call, a created or updated object takes branch a/b, which sets ``Creating``
          resp. ``Updating`` and counts it unready without analysing its status (docs/reconciler.md#item-state-machine:
          "a create
          or update costs at least one more call before Ready"). Analysing the returned object
          here would make a ConfigMap ``Ready`` one call early: a different inventory, return
          value and report, so no status step runs on it, and no GET is made for one.
        - In the next call, step 15 must read the object again: what a write returned is the
          state right after the write, but a status step reads the state *now* (a controller
          may have updated ``status``, someone may have deleted, relabelled or edited the
          object, a Deployment may have become available). That read is cheap: a caller's
          watch answers it, or, the item being ``Creating``/``Updating`` with ``lastAppliedAt``,
          one owner-filtered LIST serves its group.

        What a write returns is used where it *is* the state the next step needs: the
        managedFields migration's JSON patch supplies the resourceVersion of the forced apply
        that follows (docs/reconciler.md#updating-objects), and Events name the written object's uid and
        resourceVersion.
        The CRD/APIService release after a DELETE (docs/reconciler.md#deleting-objects) keeps its GET: a terminating CRD
        is
        updated by the API server right after the DELETE, so the DELETE's answer would mostly
        yield a 409 on the finalizer patch and cost one of its three attempts."""
        answer = call.reads.answer(d.ref)
        return self._settle(call, d, item, answer.obj, from_watch=answer.from_watch)

    def _settle(
        self, call: _Call, d: DesiredObject, item: InventoryItem, live: dict[str, Any] | None, *, from_watch: bool
    ) -> _Result:
        """``_process`` on the object as read; ``from_watch``: the caller's watch answered, so
        before a write the object is read live (docs/reconciler.md#reads-from-a-watch)."""
        ops = call.ops
        desired = stamped(d.manifest, owner_key=ops.owner_key, hashed_owner_id=ops.hashed_owner_id,
                          owner_id=ops.owner_id, digest_key=ops.digest_key, digest=item.digest)
        policy = d.annotations.update_policy
        now = self.options.clock()
        if live is None:
            if self._finished(d.ref, item):
                # docs/reconciler.md#finished-jobs: it completed, then was deleted; not run again.
                item.mark_completed()
                return _Result(item.phase, item.status, item.last_applied_at, True, item.phase.value)
            create_ns = self.missing_namespaces_policy is MissingNamespacesPolicy.CREATE and (
                self.options.allowed_namespaces is None or d.ref.namespace in self.options.allowed_namespaces
            )
            try:
                ops.create(desired, d.ref, policy, create_namespace=create_ns)
            except ApiError as exc:
                if not (from_watch and exc.status == 409):
                    raise
                # It exists after all, without our owner label: the adoption check decides, on the live object.
                found = ops.read(d.ref)
                if found is None:
                    raise
                return self._settle(call, d, item, found, from_watch=False)
            item.mark_creating(now)
            return _Result(item.phase, item.status, item.last_applied_at, False, item.phase.value)
        live_digest = str(((live.get("metadata") or {}).get("annotations") or {}).get(ops.digest_key) or "")
        terminating = is_terminating(live)
        frozen = live_digest == ONCE_DIGEST and item.digest == ONCE_DIGEST
        ours = ops.is_ours(live)
        if (item.phase is Phase.SCHEDULED_FOR_APPLICATION and item.last_applied_at is None and ours
                and live_digest == item.digest and not terminating):
            # Applied before it was recorded (docs/reconciler.md#applied-before-recorded): a
            # predecessor wrote it and stopped before its status said so. No second write. (A
            # Ready item without lastAppliedAt is a reconcile request's or drift's re-apply: due.)
            item.mark_updating(now)
        due = (
            live_digest != item.digest
            or item.last_applied_at is None
            or item.last_applied_at < now - d.annotations.reapply_interval
            or not ours
        )
        if not terminating and not frozen and due:
            if from_watch:
                return self._settle(call, d, item, ops.read(d.ref), from_watch=False)
            refusal = self._adoption_refusal(item.adoption_policy, live, d.key, ops, cluster_scoped=not item.namespace)
            if refusal is not None:
                call.counters.conflict(d.key)
                raise refusal
            if policy is UpdatePolicy.RECREATE:
                ops.delete(d.ref, live, recreating=True)
            else:
                written = ops.update(desired, live, d.ref, policy)
                if _unchanged(written, live):
                    # docs/reconciler.md#a-no-op-write: the server changed nothing, so the object is
                    # the one just read, and its status step needs no further call.
                    item.last_applied_at = now
                    return self._observe(d, item, written, terminating)
            item.mark_updating(now)
            return _Result(item.phase, item.status, item.last_applied_at, False, item.phase.value)
        return self._observe(d, item, live, terminating)

    def _finished(self, ref: ObjectRef, item: InventoryItem) -> bool:
        """docs/reconciler.md#finished-jobs: the absent object of ``item`` ran to completion, as its
        item says or as the caller saw its deletion, with the manifest it was written with."""
        if finished(item):
            return True
        completed = self.options.completed
        return (completed is not None and item.phase in _WRITTEN and (ref.group, ref.kind) in RUNS_TO_COMPLETION
                and completed(ref))

    def _observe(self, d: DesiredObject, item: InventoryItem, live: Mapping[str, Any], terminating: bool) -> _Result:
        """The status step: the analyzer's verdict on ``live`` recorded on the item."""
        try:
            status = self.analyzer.compute(live)
        except StatusAnalysisError as exc:
            raise ObjectValidationError(f"error checking status of object {d.key}: {exc}", object_key=d.key) from None
        ready = item.observe(status.status, terminating)
        return _Result(item.phase, item.status, item.last_applied_at, ready, status.message or item.phase.value)

    # -- pruning and deletion -----------------------------------------------------------------

    def _read_wave(self, call: _Call, items: Sequence[InventoryItem]) -> list[dict[str, Any] | None]:
        call.reads.prefetch([ReadTarget(item_ref(i), i) for i in items])
        outcomes = self.client.run_bounded(
            [partial(call.reads.read, item_ref(i)) for i in items], self.options.concurrency
        )
        lives: list[dict[str, Any] | None] = []
        for outcome in outcomes:
            if outcome.error is not None:
                raise outcome.error
            lives.append(outcome.value)
        return lives

    def _execute(self, call: _Call, actions: Sequence[tuple[InventoryItem, str, Any]]) -> None:
        """Run the deletions/orphanings of one delete wave concurrently; apply the phase of
        every success, then raise the first failure in inventory order."""
        ops = call.ops

        def run(item: InventoryItem, action: str, live: Any) -> None:
            if action == "delete":
                ops.delete(item_ref(item), live)
            else:
                ops.orphan(item_ref(item), live)

        outcomes = self.client.run_bounded(
            [partial(run, *a) for a in actions if a[1] in ("delete", "orphan")], self.options.concurrency
        )
        results = iter(outcomes)
        first_error: Exception | None = None
        for item, action, _ in actions:
            error = next(results).error if action in ("delete", "orphan") else None
            if error is not None:
                first_error = first_error or error
                continue
            if action == "delete":
                item.mark_deleting()
            else:
                item.mark_removed()
        if first_error is not None:
            raise first_error

    def _deletion_wave(
        self,
        call: _Call,
        inventory: Sequence[InventoryItem],
        wave: Sequence[InventoryItem],
        is_managed: Callable[[str, str, str], bool],
        *,
        deleting_call: bool,
    ) -> bool:
        """One delete wave of docs/reconciler.md#pruning (``deleting_call=False``) or docs/reconciler.md#deletion; True
        when pending."""
        ops = call.ops
        if deleting_call:
            targets = list(wave)
            managed_count = sum(1 for i in wave if is_managed(i.group, i.version, i.kind))
        else:
            targets = [i for i in wave if i.phase in DELETION_PHASES]
            managed_count = sum(1 for i in targets if is_managed(i.group, i.version, i.kind))
        if not targets:
            return False
        lives = self._read_wave(call, targets)
        removed: set[int] = set()

        def used(namespace_item: InventoryItem) -> bool:
            return any(
                other.namespace == namespace_item.name and other.phase is not Phase.NONE and id(other) not in removed
                for other in inventory
            )

        pending = False
        actions: list[tuple[InventoryItem, str, Any]] = []
        for item, live in zip(targets, lives, strict=True):
            ref = item_ref(item)
            if item.phase is Phase.DELETING:
                if live is None:
                    actions.append((item, "removed", None))
                    removed.add(id(item))
                elif is_terminating(live):
                    pending = True
                    call.pending.append((item, item.phase.value))
                elif not ops.is_ours(live):
                    log.info("orphaning resurrected object %s (probably it was recreated by someone else)", ref.key)
                    if owner_label(live, ops.owner_key):
                        ops.report_conflict(ref, live)
                    actions.append((item, "removed", None))
                    removed.add(id(item))
                else:
                    raise InconsistentStateError(
                        f"object {ref.key} was already deleted but has no deletion timestamp", object_key=ref.key
                    )
                continue
            is_namespace = (item.group, item.kind) == NAMESPACE
            eligible = not (is_namespace and used(item)) and (
                managed_count == 0 or is_managed(item.group, item.version, item.kind)
            )
            if not eligible:
                pending = True
                call.pending.append((item, item.phase.value))
                continue
            foreign = live is not None and not ops.is_ours(live)
            by_policy = item.delete_policy.orphans_on_delete if deleting_call else item.delete_policy.orphans_on_apply
            if by_policy or foreign:
                if foreign and live is not None and owner_label(live, ops.owner_key):
                    ops.report_conflict(ref, live)
                actions.append((item, "orphan", None if foreign else live))
                removed.add(id(item))
            else:
                actions.append((item, "delete", live))
                pending = True
                call.pending.append((item, Phase.DELETING.value))
        self._execute(call, actions)
        return pending

    def _prune(self, call: _Call, inventory: list[InventoryItem]) -> bool:
        """docs/reconciler.md#pruning; True when redundant objects are still pending."""
        return self._walk_delete_waves(call, inventory, deleting_call=False)

    def _walk_delete_waves(self, call: _Call, inventory: list[InventoryItem], *, deleting_call: bool) -> bool:
        """Walk the delete waves until one is pending; removed items leave the inventory even
        when a wave fails (the caller persists what this call did). True when pending."""
        is_managed = self._managed_matcher(inventory)
        pending = False
        try:
            for order, wave in itertools.groupby(list(inventory), lambda i: i.delete_order):
                call.wave = order
                if self._deletion_wave(call, inventory, list(wave), is_managed, deleting_call=deleting_call):
                    pending = True
                    break
        finally:
            inventory[:] = [i for i in inventory if i.phase is not Phase.NONE]
        if not pending:
            call.wave = None
        return pending

    def delete(self, inventory: list[InventoryItem], owner_id: str) -> bool:
        """Remove every object of the inventory in delete waves (docs/reconciler.md#deletion); ``True`` once empty."""
        call = self._new_call(owner_id)
        return self._run(call, lambda: self._delete(call, inventory)) == "done"

    def _delete(self, call: _Call, inventory: list[InventoryItem]) -> Outcome:
        if not inventory:
            return "done"
        index_items(inventory)
        self._walk_delete_waves(call, inventory, deleting_call=True)
        return "done" if not inventory else "deleting"

    # -- deletion guard -----------------------------------------------------------------------

    def is_deletion_allowed(self, inventory: Sequence[InventoryItem], owner_id: str) -> tuple[bool, str]:
        """``(False, reason)`` while foreign instances of a type the owner brings exist
        (docs/reconciler.md#deletion-checks)."""
        call = self._new_call(owner_id)
        result: tuple[bool, str] = (True, "")

        def body() -> Outcome:
            nonlocal result
            result = self._is_deletion_allowed(call, inventory)
            return "done"

        self._run(call, body)
        return result

    def _foreign_instance_exists(self, call: _Call, resource: ApiResource) -> bool:
        """Any instance in any namespace without our owner label (docs/reconciler.md#deletion-checks)."""
        everywhere = ApiResource(resource.group, resource.version, resource.kind, resource.plural, False, ())
        selector = f"{call.ops.owner_key}!={call.ops.hashed_owner_id}"
        return bool(call.ops.list(everywhere, "", selector, limit=1))

    def _is_deletion_allowed(self, call: _Call, inventory: Sequence[InventoryItem]) -> tuple[bool, str]:
        if self.options.additional_managed_types:
            preferred = self.client.server_preferred_resources()
            for t in self.options.additional_managed_types:
                for resource in preferred:
                    if (
                        group_matches(t.group, resource.group)
                        and (t.kind == "*" or t.kind == resource.kind)
                        and self._foreign_instance_exists(call, resource)
                    ):
                        return False, f"type {group_kind_string(t.group, t.kind)} is still in use (instances exist)"
        if all(item.delete_policy.orphans_on_delete for item in inventory):
            return True, ""
        for item in inventory:
            if (item.group, item.kind) == CRD:
                live = call.ops.read(item_ref(item))
                if live is None:
                    continue
                spec = live.get("spec") or {}
                served = [v for v in spec.get("versions") or [] if v.get("served")]
                if not served:
                    continue
                names = spec.get("names") or {}
                resource = ApiResource(
                    str(spec.get("group")),
                    str(served[0]["name"]),
                    str(names.get("kind")),
                    str(names.get("plural")),
                    False,
                    (),
                )
                if self._foreign_instance_exists(call, resource):
                    return False, f"crd {item.name} is still in use (instances exist)"
            elif (item.group, item.kind) == API_SERVICE:
                live = call.ops.read(item_ref(item))
                if live is None:
                    continue
                spec = live.get("spec") or {}
                seen: set[str] = set()
                for resource in self.client.discovery.resources_for_group_version(
                    str(spec.get("group")), str(spec.get("version"))
                ):
                    if resource.kind in seen:
                        continue
                    seen.add(resource.kind)
                    if self._foreign_instance_exists(call, resource):
                        return False, f"api service {item.name} is still in use (instances exist)"
        return True, ""
