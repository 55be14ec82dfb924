"""Batched reads (docs/reconciler.md#batched-reads): one LIST per (type, namespace) instead of one GET per object.

Every read a wave (or step 8) makes is grouped by ``(apiVersion, kind, namespace)``; a group
is served by one LIST when enough of its members qualify, and the outcome for every member is
the one a GET would have had:

- **Unfiltered LIST** — at least ``batch_read_threshold`` members are *new*: step 8's objects
  (no item yet) or items without ``lastAppliedAt`` (never written by us, so they usually carry
  no label of ours). The LIST has **no label selector**: it returns every object of the type
  in the namespace, ours, foreign and unlabelled alike, exactly as a GET per name would see
  them, so adoption (docs/reconciler.md#adoption-policy) and the ownership re-check
  (docs/reconciler.md#ownership-re-check) run on the same live objects.
  Run to its last page, it is complete: a member it does not contain does not exist, which is
  what the GET would have answered (404), so no request is made for it.
- **Owner-filtered LIST** — otherwise, at least ``batch_read_threshold`` members are items we
  wrote before (phase ``Creating``, ``Updating``, ``Ready``, ``ScheduledForDeletion`` or
  ``Deleting`` with ``lastAppliedAt``): label selector ``<name>/owner-id=<hashed id>``. A
  member it does not contain may exist without our label, so it is read by GET.
- Other groups, and the members an unfiltered LIST did not reach, are read by GET.

LISTs are consistent reads (no ``resourceVersion``), like GETs; their pages share one snapshot.
The paging stops early once every member was found, or once it has taken as many pages as
members are still missing (a namespace full of other objects): the missing ones are then read
by GET, so a LIST never costs much more than the GETs it replaces. A 403 (an impersonated
account without ``list``) makes the group GET-only for the rest of the call; any other LIST
failure makes it GET-only for this wave, so a failure surfaces as the GET's own error with
the GET's message. Each listed copy answers one read at most, in the wave it was made for
(a later read of the same name, e.g. after a write, is a GET); nothing is cached across calls
by the reconciler itself. A caller's watch (``ReconcilerOptions.cached_reads``) may answer a
member first, before any LIST is planned (docs/reconciler.md#reads-from-a-watch, cachedreads.py).

After an in-call checkpoint (docs/reconciler.md#in-call-checkpoint) the objects step 8 read as
absent are answered "absent" once more, without a request, in the wave that reads them: their
create is refused with 409 if one appeared meanwhile, so nothing is adopted unchecked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .cachedreads import CachedAnswer, CachedReads
from .errors import ApiError
from .inventory import InventoryItem, Phase
from .objects import NAMESPACE, ObjectRef
from .operations import Operations

__all__ = ["BATCHABLE_PHASES", "Answer", "ListPlan", "ReadCache", "ReadTarget", "plan_lists"]

log = logging.getLogger("oam_operator.reconciler")

BATCHABLE_PHASES = frozenset(
    {Phase.CREATING, Phase.UPDATING, Phase.READY, Phase.SCHEDULED_FOR_DELETION, Phase.DELETING}
)

GroupKey = tuple[str, str, str]  # (apiVersion, kind, namespace)


@dataclass(frozen=True)
class ReadTarget:
    """An object a wave will read, and its item (``None`` in step 8: the object is new to
    the inventory), which says whether it carries our label."""

    ref: ObjectRef
    item: InventoryItem | None

    @property
    def group(self) -> GroupKey:
        return (self.ref.api_version, self.ref.kind, self.ref.namespace)

    @property
    def is_new(self) -> bool:
        """Never written by us: no item yet, or an item without ``lastAppliedAt``."""
        return self.item is None or self.item.last_applied_at is None

    @property
    def is_labelled(self) -> bool:
        """Written by us before, so it carries our owner label (unless someone removed it)."""
        item = self.item
        return item is not None and item.phase in BATCHABLE_PHASES and item.last_applied_at is not None


@dataclass(frozen=True)
class ListPlan:
    """One LIST of a wave: ``selector`` is our owner-id selector, or ``None`` for every object
    of the type in the namespace; ``members`` are the names the wave will read."""

    group: GroupKey
    selector: str | None
    members: tuple[str, ...]


def plan_lists(
    targets: Sequence[ReadTarget],
    *,
    threshold: int,
    owner_selector: str,
    excluded: frozenset[GroupKey] | set[GroupKey] = frozenset(),
) -> list[ListPlan]:
    """The LISTs for a wave's reads, in order of each group's first member (module docstring)."""
    members: dict[GroupKey, dict[str, None]] = {}  # ordered sets
    new: dict[GroupKey, int] = {}
    labelled: dict[GroupKey, int] = {}
    for t in targets:
        g = t.group
        names = members.setdefault(g, {})
        if t.ref.name in names:
            continue
        names[t.ref.name] = None
        if t.is_new:
            new[g] = new.get(g, 0) + 1
        elif t.is_labelled:
            labelled[g] = labelled.get(g, 0) + 1
    plans: list[ListPlan] = []
    for g, names in members.items():
        if g in excluded:
            continue
        if new.get(g, 0) >= threshold:
            plans.append(ListPlan(g, None, tuple(names)))
        elif labelled.get(g, 0) >= threshold:
            plans.append(ListPlan(g, owner_selector, tuple(names)))
    return plans


@dataclass(frozen=True)
class Answer:
    """A read's result; ``from_watch`` when the caller's watch gave it without a request
    (docs/reconciler.md#reads-from-a-watch: a write then reads the object live first)."""

    obj: dict[str, Any] | None
    from_watch: bool = False


@dataclass
class _Listing:
    """A LIST result: the members found, the members it may still answer, and whether a
    member it lacks is known to be absent."""

    objects: dict[str, dict[str, Any]]
    unanswered: set[str] = field(default_factory=set)
    complete: bool = False


class ReadCache:
    """Per call: which groups may be listed, and the LIST results of the current wave."""

    def __init__(self, ops: Operations, *, enabled: bool, threshold: int, concurrency: int,
                 watch: CachedReads | None = None) -> None:
        self._ops = ops
        self._watch = watch
        self._watched: dict[tuple[str, str, str, str], CachedAnswer] = {}
        self._enabled = enabled
        self._threshold = threshold
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._listed: dict[GroupKey, _Listing] = {}
        self._forbidden: set[GroupKey] = set()
        self._absent: set[tuple[str, str, str, str]] = set()

    def remember_absent(self, refs: Iterable[ObjectRef]) -> None:
        """Answer the next read of each of ``refs`` with "absent", without a request."""
        with self._lock:
            self._absent.update(_key(ref) for ref in refs)

    def prefetch(self, targets: Sequence[ReadTarget], *, from_watch: bool = False) -> None:
        """Start a wave: drop the previous wave's results, take what the caller's watch answers
        (with ``from_watch``), LIST every qualifying group of the rest."""
        self._listed = {}
        self._watched = {}
        if from_watch and self._watch is not None:
            unanswered = []
            for t in targets:
                trusted = self._trusted(t)
                if trusted is None:
                    unanswered.append(t)
                else:
                    self._watched[_key(t.ref)] = trusted
            targets = unanswered
        if not self._enabled:
            return
        with self._lock:
            excluded = set(self._forbidden)
            targets = [t for t in targets if _key(t.ref) not in self._absent]
        plans = plan_lists(
            targets,
            threshold=self._threshold,
            owner_selector=f"{self._ops.owner_key}={self._ops.hashed_owner_id}",
            excluded=excluded,
        )
        outcomes = self._ops.client.run_bounded([partial(self._list, p) for p in plans], self._concurrency)
        for plan, outcome in zip(plans, outcomes, strict=True):
            if outcome.error is not None:
                raise outcome.error  # not an API error: a bug
            if outcome.value is not None:
                self._listed[plan.group] = outcome.value

    def _list(self, plan: ListPlan) -> _Listing | None:
        """Run one planned LIST; ``None`` when its members must be read by GET."""
        api_version, kind, namespace = plan.group
        wanted = set(plan.members)
        found: dict[str, dict[str, Any]] = {}
        complete = False
        try:
            resource = self._ops.client.resource_for(api_version, kind)
            if resource is None:
                return None  # not served: the GET path answers "absent" itself
            pages = self._ops.list_pages(resource, namespace if resource.namespaced else "", plan.selector)
            for count, (page, cont) in enumerate(pages, start=1):
                for obj in page:
                    name = str((obj.get("metadata") or {}).get("name"))
                    if name in wanted:
                        found[name] = obj
                missing = len(wanted) - len(found)
                if not cont:
                    complete = plan.selector is None
                    break
                if missing == 0 or count >= missing:
                    break  # everything found, or further pages would cost more than GETs
        except ApiError as exc:
            if exc.status == 403:
                with self._lock:
                    self._forbidden.add(plan.group)
            log.debug("reading %s %s in %r by GET: %s", api_version, kind, namespace, exc)
            return None
        return _Listing(objects=found, unanswered=wanted, complete=complete)

    def _trusted(self, target: ReadTarget) -> CachedAnswer | None:
        """The watch's answer where the reconciler may rely on it (cachedreads.py), else ``None``."""
        assert self._watch is not None
        answer = self._watch.lookup(target.ref)
        if answer.state == "present":
            return answer
        if answer.state == "absent" and target.is_new and (target.ref.group, target.ref.kind) != NAMESPACE:
            return answer
        return None

    def answer(self, ref: ObjectRef) -> Answer:
        """``read``, telling whether the caller's watch answered (taken in ``prefetch``)."""
        with self._lock:
            watched = self._watched.pop(_key(ref), None)
        if watched is not None:
            return Answer(watched.obj, from_watch=True)
        return Answer(self.read(ref))

    def read(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The live object: from this wave's LIST when it answers for ``ref``, else by GET."""
        with self._lock:
            key = _key(ref)
            if key in self._absent:
                self._absent.discard(key)
                return None
            listing = self._listed.get((ref.api_version, ref.kind, ref.namespace))
            if listing is not None and ref.name in listing.unanswered:
                listing.unanswered.discard(ref.name)
                hit = listing.objects.pop(ref.name, None)
                if hit is not None or listing.complete:
                    return hit
        return self._ops.read(ref)


def _key(ref: ObjectRef) -> tuple[str, str, str, str]:
    return (ref.api_version, ref.kind, ref.namespace, ref.name)
