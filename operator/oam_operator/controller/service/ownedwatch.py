"""Watches of the objects the operator owns (docs/operator.md#watches-of-owned-objects).

One watch per kind in use and namespace scope, shared by every Application of the instance,
with the operator's own identity and the selector "has our owner label and this instance's shard
label" (``selector``, controller/reconcile/sharding.py). It serves three uses:

- readiness wake-ups (``readiness.py``): an event whose object is no longer progressing wakes
  the Application that owns it;
- drift (``fieldsets.py``): for every object it keeps what the operator's field manager owned
  after the operator's last write (``applied``, from the write's response through the
  reconciler's ``on_written``) and what it owns now (``live``, from the watch). Fields in
  ``applied`` but not in ``live`` were taken by another manager; a deleted object is drift too.
  A change of either kind wakes the owner, whose pass asks ``drift()``;
- the reconciler's reads (``lookup``, docs/operator.md#reads-from-the-watch): a compact copy of
  each object (``objectcopies.py``), replaced by each write's response and by later events only.

What is kept per object is small: its owner, two compressed field sets, the compressed copy
(metadata, spec and status; no data) and a deletion mark. Secrets stay out (``EXCLUDED``): their
events carry the secret data through the operator's memory and watching them needs cluster-wide
read of every Secret; their drift is found at the reapply interval. A kind the
operator may not list or watch (403: one outside the chart's ``leastPrivilege`` reads) is logged
once and stays unwatched: its drift is found at the reapply interval and its waits keep the
backoff. A watch that ends or fails (an API server restart, ``410 Gone``) lists its kind again
and compares: what changed meanwhile is seen then, so a hand edit made while the API server was
down is still found. The first sight of an object this process never wrote is no baseline: the
first pass that asks (``unverified_drift``) compares the fields the desired object sets with
what the operator's manager owns (``unowned.py``), so an edit made while no instance watched (its
only witness killed before it corrected it) is still drift, found within the drift bound.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oam_operator.reconciler.cachedreads import ABSENT, UNKNOWN, CachedAnswer
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.completion import RUNS_TO_COMPLETION, ran_to_completion
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.identity import split_api_version
from oam_operator.reconciler.inventory import InventoryItem
from oam_operator.reconciler.objects import ObjectRef

from ..reconcile.watched import Drift, ObjectKey, WatchedKind
from .fieldsets import FieldSet, manager_fields, removed
from .objectcopies import compact_copy, expand, is_older, resource_version
from .unowned import unowned_paths
from .watchstream import follow

__all__ = ["EXCLUDED", "Drift", "ObjectKey", "OwnedObjects", "WatchedKind"]  # the first three from watched.py

log = logging.getLogger("oam_operator.controller")

#: (group, kind) never watched: their content is sensitive (module docstring).
EXCLUDED = frozenset({("", "Secret")})

_RETRY = 5.0  # seconds before a failed watch starts again
_PAGE = 500

@dataclass
class _Owned:
    owner: tuple[str, str]
    applied: FieldSet | None
    live: FieldSet | None
    copy: bytes | None = None  # objectcopies.py: what reads are answered with
    version: str = ""  # the copy's resourceVersion
    deleted: bool = False
    #: ``applied`` comes from this process's own write, or a pass compared the first sight with the
    #: desired object (``unverified_drift``); until then the first sight is no baseline
    witnessed: bool = False
    completed: bool = False  # its last state before the deletion had run to completion


@dataclass
class _Scope:
    """One watch thread's state: whether it is synced, and what it has listed."""

    live: bool = False
    listed: bool = False  # listed once (or refused): what this process knows of the scope is complete
    keys: set[ObjectKey] = field(default_factory=set)


class OwnedObjects:
    """The watches and their small cache; ``on_change(namespace, name, key, obj, deleted)`` is
    called in a watch thread for the owning Application of every object that changed (``obj`` is
    only a stub of a deletion the relist found)."""

    def __init__(self, client: ClusterClient, *, domain: str, cluster_id: str, namespaces: Sequence[str],
                 on_change: Callable[[str, str, ObjectKey, Mapping[str, Any], bool], None],
                 on_state: Callable[[WatchedKind, str], None] | None = None, selector: str | None = None,
                 yielder: Callable[[], Callable[[], None]] | None = None) -> None:
        self.client = client
        self.manager = domain
        self.owner_key = f"{domain}/owner-id"
        self.selector = selector or self.owner_key  # of the LIST and watch: the instance's shard (sharding.py)
        self.cluster_id = cluster_id
        self.scopes = tuple(namespaces) or ("",)
        self.on_change = on_change
        self.on_state = on_state  # (kind, "synced" | "down" | "forbidden"), for the metric
        #: a fresh pause per LIST, called between two listed objects: it waits while an urgent pass runs (urgency.py)
        self.yielder = yielder
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._listed = threading.Condition(self._lock)  # notified when a scope is listed for the first time
        self._kinds: dict[tuple[str, str], WatchedKind] = {}
        self._scopes: dict[tuple[str, str, str], _Scope] = {}  # (group, kind, scope)
        self._objects: dict[ObjectKey, _Owned] = {}
        self._by_owner: dict[tuple[str, str], set[ObjectKey]] = {}
        self._threads: list[threading.Thread] = []
        self._epoch = 0  # watches that went down so far (quiet.py: a routine pass trusts none from before)

    @property
    def epoch(self) -> int:
        """How many times one of the watches went down (ended, failed, was refused): a pass that
        confirmed an Application from the watches trusts them only while this has not moved."""
        with self._lock:
            return self._epoch

    # -- kinds ------------------------------------------------------------------------------

    def watch(self, kind: WatchedKind) -> None:
        """Start watching ``kind`` (once; excluded kinds never)."""
        if self._stopped.is_set() or not self._register(kind):
            return
        for scope in self._scopes_of(kind):
            thread = threading.Thread(target=self._run, args=(kind, scope), daemon=True,
                                      name=f"owned-{kind.plural}-{scope or 'all'}")
            thread.start()
            self._threads.append(thread)

    def _register(self, kind: WatchedKind) -> bool:
        """Record ``kind`` as watched; ``False`` when it already was or never may be."""
        ident = (kind.group, kind.kind)
        if ident in EXCLUDED:
            return False
        with self._lock:
            if ident in self._kinds:
                return False
            self._kinds[ident] = kind
        return True

    def ensure(self, items: Iterable[InventoryItem]) -> None:
        """Watch the kinds of an Application's inventory, resolved by discovery; a kind discovery
        does not know (yet) is tried again at the next call."""
        for item in items:
            if (item.group, item.kind) in EXCLUDED:
                continue
            with self._lock:
                if (item.group, item.kind) in self._kinds:
                    continue
            try:
                resource = self.client.resource_for(item.api_version, item.kind)
            except Exception:  # discovery failed: a later pass asks again
                continue
            if resource is None:
                continue
            self.watch(WatchedKind(item.group, item.version, resource.plural, item.kind, resource.namespaced))

    def watched(self, group: str, kind: str) -> bool:
        """Whether every scope of this kind is watched and synced right now."""
        with self._lock:
            known = self._kinds.get((group, kind))
            if known is None:
                return False
            return all(self._scopes.get((group, kind, scope), _Scope()).live for scope in self._scopes_of(known))

    def wait_listed(self, timeout: float) -> bool:
        """Wait until every kind watched so far was listed once in each of its scopes (or refused);
        ``False`` when ``timeout`` seconds passed first. From then on a settled Application's pass
        reads what it owns from the watches, not from the API server (docs/operator.md#a-quiet-restart)."""
        with self._listed:
            return self._listed.wait_for(self._all_listed_unlocked, timeout)

    def _all_listed_unlocked(self) -> bool:
        return self._stopped.is_set() or all(self._scopes.get((ident[0], ident[1], scope), _Scope()).listed
                   for ident, known in self._kinds.items() for scope in self._scopes_of(known))

    # -- the cache --------------------------------------------------------------------------

    def written(self, obj: Mapping[str, Any]) -> None:
        """The response of the operator's own write: what it owns now is the new baseline."""
        key, owner = self._identify(obj)
        if key is None or owner is None:
            return
        fields = manager_fields(obj, self.manager)
        copy, version = compact_copy(obj), resource_version(obj)
        with self._lock:
            if (key[0], key[1]) not in self._kinds:
                return
            entry = self._objects.get(key)
            if entry is not None and entry.owner == owner and not entry.deleted and is_older(version, entry.version):
                entry.applied, entry.witnessed = fields, True  # the watch already holds a later state: keep it
                return
            self._store(key, owner, applied=fields, live=fields, copy=copy, version=version)
            self._objects[key].witnessed = True

    def lookup(self, ref: ObjectRef) -> CachedAnswer:
        """The reconciler's read of an owned object (reconciler/cachedreads.py): a copy, "absent"
        (the kind's watch is synced and has never seen it), or "unknown" (not watched or not
        synced, or seen deleted: a deletion may only be the owner label's removal)."""
        key = (ref.group, ref.kind, ref.namespace, ref.name)
        with self._lock:
            if not self._synced_unlocked(ref.group, ref.kind, ref.namespace):
                return UNKNOWN
            entry = self._objects.get(key)
            if entry is None:
                return ABSENT
            if entry.deleted or entry.copy is None:
                return UNKNOWN
            copy = entry.copy
        return CachedAnswer("present", expand(copy))

    def drift(self, group: str, kind: str, namespace: str, name: str) -> Drift | None:
        """What another manager took from this object since the operator last wrote it;
        ``None`` when nothing (or when it is not watched: then nothing is known)."""
        with self._lock:
            if not self._synced_unlocked(group, kind, namespace):
                return None
            entry = self._objects.get((group, kind, namespace, name))
            if entry is None:
                return None
            if entry.deleted:
                return Drift(deleted=True, completed=entry.completed)
            if entry.applied is None:
                return None
            taken = removed(entry.applied, entry.live)
            return Drift(tuple(taken)) if taken else None

    def unverified_drift(self, group: str, kind: str, namespace: str, name: str,
                         desired: Mapping[str, Any]) -> Drift | None:
        """For an object this process never wrote nor compared yet: the fields ``desired`` sets
        that the operator's manager does not own now (``unowned.py``), ``None`` when none (then
        the object counts as compared: later drift is read from its field sets as usual) or when
        it was witnessed already, is not watched, or is not known."""
        with self._lock:
            if not self._synced_unlocked(group, kind, namespace):
                return None
            entry = self._objects.get((group, kind, namespace, name))
            if entry is None or entry.witnessed or entry.deleted:
                return None
            live = entry.live
        taken = unowned_paths(desired, live.fields if live is not None else None)
        if taken:
            return Drift(tuple(taken))
        with self._lock:
            entry = self._objects.get((group, kind, namespace, name))
            if entry is not None and entry.live == live:
                entry.witnessed = True
        return None

    def forget_writes(self) -> None:
        """After a lost Lease (``Runtime.stand_down``): what this instance last wrote is no baseline
        any more, since another leader may write the objects next. Each object's baseline becomes
        what the watch last saw of it, as a standby that watched all along has it, so an edit made
        while no instance led is still found. The copies stay: the watch follows the API server
        whoever writes, and lists again after a reconnect."""
        with self._lock:
            for entry in self._objects.values():
                entry.applied = entry.live

    def retain(self, owner: tuple[str, str], keys: Iterable[ObjectKey]) -> None:
        """Forget what ``owner`` no longer has in its inventory (pruned, or the Application gone)."""
        wanted = set(keys)
        with self._lock:
            for key in list(self._by_owner.get(owner, ())):
                if key not in wanted:
                    self._objects.pop(key, None)
                    self._by_owner[owner].discard(key)
                    state = self._scopes.get(self._scope_key(key))
                    if state is not None:
                        state.keys.discard(key)
            if not self._by_owner.get(owner):
                self._by_owner.pop(owner, None)

    def sizes(self) -> tuple[int, int]:
        """(objects kept, bytes they take: the key, the entry and its field sets as Python holds
        them, measured with ``sys.getsizeof``), for the metrics when scraped and the benchmarks."""
        with self._lock:
            total = 0
            for key, entry in self._objects.items():
                total += sys.getsizeof(key) + sum(sys.getsizeof(part) for part in key)
                total += sys.getsizeof(entry) + sys.getsizeof(entry.owner)
                distinct = {id(f): f for f in (entry.applied, entry.live) if f is not None}  # often one object
                total += sum(sys.getsizeof(f) + sys.getsizeof(f.packed) for f in distinct.values())
                total += sys.getsizeof(entry.copy) + sys.getsizeof(entry.version)
            return len(self._objects), total

    def _scopes_of(self, kind: WatchedKind) -> tuple[str, ...]:
        """The namespace scopes a kind is watched in: one cluster-wide watch when it is cluster-scoped."""
        return self.scopes if kind.namespaced else ("",)

    def _scope_key(self, key: ObjectKey) -> tuple[str, str, str]:
        """(group, kind, scope) of the watch that sees the object ``key`` (under the lock)."""
        known = self._kinds.get((key[0], key[1]))
        scope = "" if known is None or not known.namespaced or self.scopes == ("",) else key[2]
        return key[0], key[1], scope

    def _synced_unlocked(self, group: str, kind: str, namespace: str) -> bool:
        if (group, kind) not in self._kinds:
            return False
        state = self._scopes.get(self._scope_key((group, kind, namespace, "")))
        return state is not None and state.live

    def _store(self, key: ObjectKey, owner: tuple[str, str], *, applied: FieldSet | None,
               live: FieldSet | None, copy: bytes | None, version: str) -> None:
        self._objects[key] = _Owned(owner, applied, live, copy, version)
        self._by_owner.setdefault(owner, set()).add(key)
        if (key[0], key[1]) in self._kinds:  # so a relist notices its deletion while unwatched
            self._scopes.setdefault(self._scope_key(key), _Scope()).keys.add(key)

    def _identify(self, obj: Mapping[str, Any]) -> tuple[ObjectKey | None, tuple[str, str] | None]:
        meta = obj.get("metadata") or {}
        owner = (meta.get("annotations") or {}).get(self.owner_key)
        if not isinstance(owner, str):
            return None, None
        cluster, _, rest = owner.partition("/")
        namespace, _, name = rest.partition("/")
        if cluster != self.cluster_id or not namespace or not name:
            return None, None
        group, _ = split_api_version(str(obj.get("apiVersion") or ""))
        key = (group, str(obj.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        return key, (namespace, name)

    # -- events -----------------------------------------------------------------------------

    def handle(self, event: Mapping[str, Any], kind: WatchedKind | None = None) -> None:
        """One watch event: update the cache and tell the owner (every event: readiness needs
        the status changes too)."""
        obj = event.get("object")
        if not isinstance(obj, Mapping):
            return
        if kind is not None:
            obj = self._typed(obj, kind)
        if event.get("type") == "DELETED":
            key, owner = self._identify(obj)
            if key is None or owner is None:
                return
            with self._lock:
                entry = self._objects.get(key)
                if entry is not None:
                    entry.deleted, entry.live, entry.copy = True, None, None
                    entry.version = resource_version(obj)
                    entry.completed = ran_to_completion(obj)  # the event holds its last state
            self.on_change(owner[0], owner[1], key, obj, True)
            return
        self._absorb(obj, always=True)

    def _absorb(self, obj: Mapping[str, Any], *, always: bool) -> ObjectKey | None:
        """Take a live object into the cache; tell its owner when ``always`` or when what the
        operator owns of it changed (an object first seen is its own baseline: no change)."""
        key, owner = self._identify(obj)
        if key is None or owner is None:
            return None
        version = resource_version(obj)
        with self._lock:
            entry = self._objects.get(key)
            held = bool(version) and entry is not None and entry.owner == owner and not entry.deleted \
                and version == entry.version
        if held:  # the state the operator's own write returned (or a relist's unchanged one): kept already
            if always:
                self.on_change(owner[0], owner[1], key, obj, False)
            return key
        fields = manager_fields(obj, self.manager)
        copy = compact_copy(obj)
        with self._lock:
            entry = self._objects.get(key)
            if entry is None or entry.owner != owner:
                self._store(key, owner, applied=fields, live=fields, copy=copy, version=version)
                changed = False
            elif is_older(version, entry.version):
                return key  # a state from before the operator's own last write (or a later event): nothing new
            else:
                changed = entry.deleted or entry.live != fields
                entry.live, entry.deleted, entry.copy, entry.version = fields, False, copy, version
                if entry.applied is None:
                    entry.applied = fields
        if always or changed:
            self.on_change(owner[0], owner[1], key, obj, False)
        return key

    @staticmethod
    def _typed(obj: Mapping[str, Any], kind: WatchedKind) -> Mapping[str, Any]:
        """List items (and some events) carry no apiVersion and kind: fill them in."""
        if obj.get("kind"):
            return obj
        return {**obj, "apiVersion": kind.api_version, "kind": kind.kind}

    # -- threads ----------------------------------------------------------------------------

    def start(self, kinds: Iterable[WatchedKind]) -> None:
        for kind in kinds:
            self.watch(kind)

    def stop(self) -> None:
        self._stopped.set()
        with self._listed:
            self._listed.notify_all()

    def _mark(self, kind: WatchedKind, scope: str, live: bool, state_name: str) -> None:
        with self._lock:
            state = self._scopes.setdefault((kind.group, kind.kind, scope), _Scope())
            state.live = live
            if not live:
                self._epoch += 1
            if live or state_name == "forbidden":
                state.listed = True
                self._listed.notify_all()
        if self.on_state is not None:
            self.on_state(kind, state_name)

    def _run(self, kind: WatchedKind, scope: str) -> None:
        path = kind.path(scope)
        while not self._stopped.is_set():
            try:
                version = self._list(kind, scope, path)
                self._mark(kind, scope, True, "synced")
                self._follow(kind, path, version)
                self._mark(kind, scope, False, "down")
                continue  # the server asked for a new LIST (410 Gone)
            except ApiError as error:
                if error.status in (403, 404):
                    self._mark(kind, scope, False, "forbidden")
                    log.info("not watching %s (%s): its drift is found at the reapply interval and waits for it "
                             "use the backoff", path, error)
                    return
                self._mark(kind, scope, False, "down")
                log.debug("watch of %s ended: %s", path, error)
            except Exception:  # a bug must not end the operator; the kind is polled meanwhile
                self._mark(kind, scope, False, "down")
                log.exception("watch of %s failed", path)
            self._stopped.wait(_RETRY)

    def _list(self, kind: WatchedKind, scope: str, path: str) -> str:
        """LIST every owned object of the kind (in pages) into the cache, telling owners what
        changed while the kind was not watched; the version to watch from."""
        seen: set[ObjectKey] = set()
        token, version = "", ""
        pause = self.yielder() if self.yielder is not None else None
        while True:
            query = [("labelSelector", self.selector), ("limit", str(_PAGE))]
            if token:
                query.append(("continue", token))
            page = self.client.request("list", "GET", path, query=query, background=True)
            for item in page.get("items") or []:
                if pause is not None:
                    pause()
                key = self._absorb(self._typed(item, kind), always=False)
                if key is not None:
                    seen.add(key)
            metadata = page.get("metadata") or {}
            token = str(metadata.get("continue") or "")
            if not token:
                version = str(metadata.get("resourceVersion") or "")
                break
        with self._lock:
            state = self._scopes.setdefault((kind.group, kind.kind, scope), _Scope())
            gone = [(key, self._objects[key].owner) for key in state.keys - seen
                    if key in self._objects and not self._objects[key].deleted]
            state.keys = seen
            for key, _ in gone:  # deleted while the kind was not watched
                entry = self._objects[key]
                entry.completed = entry.copy is not None and (key[0], key[1]) in RUNS_TO_COMPLETION \
                    and ran_to_completion(expand(entry.copy))
                entry.deleted, entry.live, entry.copy = True, None, None
        for key, owner in gone:
            stub = {"apiVersion": kind.api_version, "kind": kind.kind,
                    "metadata": {"namespace": key[2], "name": key[3]}}
            self.on_change(owner[0], owner[1], key, stub, True)
        return version

    def _follow(self, kind: WatchedKind, path: str, version: str) -> None:
        """Follow the watch from ``version`` until it must be started again from a LIST."""
        follow(self.client, path, [("labelSelector", self.selector)], version, self._stopped,
               lambda type_, obj: self.handle({"type": type_, "object": obj}, kind))
