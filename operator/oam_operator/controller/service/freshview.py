"""Whether kopf's copy of an Application may be acted on (docs/operator.md#a-fresh-view).

kopf hands each loop and deletion handler the body its watch last delivered. Within one term of
leadership that copy is safe to act on: while this instance leads, nobody else removes the
finalizer, so an Application it holds cannot have gone without its own delete pass. Across a
takeover (or the start of a process) it is not: kopf's watch may have been failing (an API server
restart, kopf's watch backoff) while the previous leader deleted the Application and its objects,
and an apply pass from that copy would create them again, in no inventory.

So every term begins with one LIST of the instance's Applications (its shard's selector, its
namespaces): the resourceVersion of each as it stands. An Application's first pass in the term
acts on kopf's copy when that copy is at least as new as the listed one, or was created after the
list; otherwise it reads the Application (one GET), and a 404 or another uid (a namesake created
since) ends the pass: the Application is gone and is forgotten. The resourceVersions are compared
as the integers etcd makes them; one that is not an integer is read afresh.

A pass somebody asked for (``urgent``: a new or changed Application, a deletion) does not wait
for the term's LIST while it is not made: it reads its Application instead (one GET), and the LIST
is made in a thread of its own if nobody makes it yet, so the passes after it use it. In front of
10,000 Applications that LIST takes seconds at a start, and a new Application's first pass would
wait for all of it (docs/operator.md#a-quiet-restart).

kopf lists the Applications too, as its watch starts. A LIST of kopf's that began in the term
(``listing``, fed page by page through ``kopftuning.observe_lists``) is as good as the term's own:
the same selector, the same namespaces, made after the term began. At a start kopf's watches
begin only after the first election round (``controller.py``), so a process that leads from its
start lists its Applications once, not twice: ``follow_lists`` makes the term whose LIST kopf will
make wait for it (``KOPF_LIST_WAIT`` at most, then it lists itself).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oam_operator.api.meta import application_path, applications_path
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

__all__ = ["KOPF_LIST_WAIT", "FreshView", "ListCapture", "TermList", "Unfinalized", "still_there"]

log = logging.getLogger("oam_operator.controller")

_PAGE = 500
#: longest wait of a pass for kopf's LIST of a term that expects it, before it lists itself
KOPF_LIST_WAIT = 30.0


@dataclass(frozen=True)
class Unfinalized:
    """An Application the term's LIST found without the operator's finalizer (nobody led when it
    was created: only the leader adds it, docs/operator.md#leader-election)."""

    namespace: str
    name: str
    uid: str
    resource_version: str
    has_finalizers: bool


@dataclass(frozen=True)
class TermList:
    """What the term's LIST found: each Application's resourceVersion by uid, the list's own, and
    the Applications (not being deleted) without the finalizer."""

    versions: Mapping[str, int | None]
    list_version: int | None
    unfinalized: tuple[Unfinalized, ...] = ()


def _version(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _unfinalized(meta: Mapping[str, Any], finalizer: str) -> Unfinalized | None:
    finalizers = meta.get("finalizers")
    if not finalizer or finalizer in (finalizers or ()) or meta.get("deletionTimestamp"):
        return None
    return Unfinalized(str(meta.get("namespace") or ""), str(meta.get("name") or ""), str(meta.get("uid") or ""),
                       str(meta.get("resourceVersion") or ""), has_finalizers=bool(finalizers))


class ListCapture:
    """One LIST of kopf's, page by page, for the term it began in (``FreshView.listing``)."""

    def __init__(self, view: FreshView, term: int, scope: str) -> None:
        self.view = view
        self.term = term
        self.scope = scope
        self.versions: dict[str, int | None] = {}
        self.unfinalized: list[Unfinalized] = []
        self.list_version: int | None = None
        self.pages = 0
        self.began = time.monotonic()

    def page(self, items: Sequence[Mapping[str, Any]]) -> None:
        self.pages += 1
        for item in items:
            meta = _meta(item)
            self.versions[str(meta.get("uid"))] = _version(meta.get("resourceVersion"))
            missing = _unfinalized(meta, self.view.finalizer)
            if missing is not None:
                self.unfinalized.append(missing)

    def done(self, list_version: Any) -> None:
        """The last page came: the LIST is the term's for its namespace, if the term still runs."""
        self.list_version = _version(list_version)
        self.view._captured(self)


class FreshView:
    """The term's view of which Applications exist; ``body_for`` is asked before each pass.

    ``new_term()`` is called when the instance starts leading and when it stops; without leader
    election the process's one term starts with it. The LIST is made lazily, by the first pass of
    the term, with the (fenced) pass client: a LIST that fails raises, and the pass acts on nothing.
    """

    def __init__(self, client: ClusterClient, *, selector: str, namespaces: Sequence[str],
                 finalizer: str = "") -> None:
        self.client = client
        self.finalizer = finalizer
        self.selector = selector
        self.scopes = tuple(namespaces) or ("",)
        self._lock = threading.Lock()
        self._listing = threading.Lock()  # one LIST per term, however many passes ask at once
        self._term = 1
        self._list: TermList | None = None
        self._fresh: dict[str, int] = {}  # uid -> the term in which its copy was found fresh
        self._started = 0  # the last term whose LIST a thread of its own was started for
        self._listed = threading.Condition(self._lock)  # notified when a term's LIST is made
        self._follows = False  # kopf's LISTs are offered (``follow_lists``)
        self._kopf_began = False  # kopf began a LIST of Applications in this process
        self._awaited = 0  # the term whose LIST kopf will make: its passes wait for it
        self._captured_scopes: dict[str, ListCapture] = {}  # this term's, until every namespace's is in

    def follow_lists(self) -> None:
        """kopf's LISTs of the Applications will be offered (``listing``); the current term, when
        kopf has not listed yet, waits for kopf's rather than making its own."""
        with self._lock:
            self._follows = True
            if not self._kopf_began:
                self._awaited = self._term

    def new_term(self) -> bool:
        """A new term; whether its LIST will be kopf's first (kopf lists only after this: it has
        not begun listing yet), so nothing a LIST finds needs doing before kopf sees it."""
        with self._lock:
            self._term += 1
            self._list = None
            self._fresh.clear()
            self._captured_scopes.clear()
            self._awaited = self._term if self._follows and not self._kopf_began else 0
            self._listed.notify_all()
            return self._awaited == self._term

    def listing(self, namespace: str | None, selector: str) -> ListCapture | None:
        """A LIST of kopf's begins (in ``namespace``; ``None``: all): its capture when its pages
        may make this term's LIST (the same selector, one of the instance's namespaces, the term's
        LIST not made yet)."""
        scope = namespace or ""
        with self._lock:
            self._kopf_began = True
            if not self._follows or self._list is not None or selector != self.selector or scope not in self.scopes:
                return None
            return ListCapture(self, self._term, scope)

    def _captured(self, capture: ListCapture) -> None:
        with self._lock:
            if capture.term != self._term or self._list is not None:
                return
            self._captured_scopes[capture.scope] = capture
            if any(scope not in self._captured_scopes for scope in self.scopes):
                return
            captures = [self._captured_scopes[scope] for scope in self.scopes]
            versions: dict[str, int | None] = {}
            unfinalized: list[Unfinalized] = []
            for each in captures:
                versions.update(each.versions)
                unfinalized.extend(each.unfinalized)
            known = [each.list_version for each in captures]
            oldest = None if None in known else min(v for v in known if v is not None)
            self._list = TermList(versions, oldest, tuple(unfinalized))
            self._captured_scopes.clear()
            self._listed.notify_all()
        log.info("the term's LIST of Applications is kopf's", extra={"fields": {
            "applications": len(versions), "pages": sum(each.pages for each in captures),
            "seconds": round(time.monotonic() - min(each.began for each in captures), 2)}})

    def forget(self, uid: str) -> None:
        with self._lock:
            self._fresh.pop(uid, None)

    def unfinalized(self) -> tuple[Unfinalized, ...]:
        """The Applications of this term's LIST without the finalizer (made now when not made
        yet); raises ``ApiError`` when the LIST fails."""
        with self._lock:
            term = self._term
        return self._term_list(term).unfinalized

    def body_for(self, uid: str, body: Mapping[str, Any], *, urgent: bool = False) -> Mapping[str, Any] | None:
        """The body a pass may act on: kopf's ``body``, or the API server's when kopf's may be
        stale; ``None`` when the Application of ``uid`` is gone. Raises ``ApiError`` when that
        cannot be told (the API server does not answer). ``urgent``: read the Application rather
        than wait for the term's LIST when it is not made yet."""
        with self._lock:
            term = self._term
            if self._fresh.get(uid) == term:
                return body
            made = self._list
            start = made is None and urgent and self._started != term and self._awaited != term
            if start:
                self._started = term
        if made is None and urgent:
            if start:
                threading.Thread(target=self._list_quietly, args=(term,), name="oam-term-list", daemon=True).start()
            return self._read_fresh(uid, term, body)
        listed = made if made is not None else self._term_list(term)
        held = _version(_meta(body).get("resourceVersion"))
        if held is not None:
            if uid in listed.versions:
                version = listed.versions[uid]
                if version is not None and held >= version:
                    return self._mark(uid, term, body)
            elif listed.list_version is not None and held > listed.list_version:
                return self._mark(uid, term, body)  # created (or changed) after the list: kopf saw it live
        return self._read_fresh(uid, term, body)

    def _read_fresh(self, uid: str, term: int, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The API server's body of ``uid``, fresh in ``term``; ``None`` when it is gone."""
        found = self._read(body)
        if found is None or _meta(found).get("uid") != uid:
            return None
        return self._mark(uid, term, found)

    def _mark(self, uid: str, term: int, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with self._lock:
            if self._term == term:
                self._fresh[uid] = term
        return body

    def _list_quietly(self, term: int) -> None:
        """The term's LIST for the passes after an urgent one; a failure leaves it to the next pass."""
        try:
            self._term_list(term)
        except ApiError as error:
            log.debug("the term's LIST of Applications failed: %s", error)

    def _term_list(self, term: int) -> TermList:
        with self._listing:
            with self._lock:
                if self._awaited == term:  # kopf's LIST will be the term's: wait for it, not too long
                    self._listed.wait_for(lambda: self._list is not None or self._term != term,
                                          timeout=KOPF_LIST_WAIT)
                    if self._term == term:
                        self._awaited = 0
                if self._list is not None and self._term == term:
                    return self._list
            listed = self._list_all()
            with self._lock:
                if self._term == term:
                    self._list = listed
            return listed

    def _list_all(self) -> TermList:
        versions: dict[str, int | None] = {}
        list_version: int | None = None
        unfinalized: list[Unfinalized] = []
        for scope in self.scopes:
            path = applications_path(scope)
            token = ""
            while True:
                query = [("labelSelector", self.selector), ("limit", str(_PAGE))]
                if token:
                    query.append(("continue", token))
                page = self.client.request("list", "GET", path, query=query)
                for item in page.get("items") or ():
                    meta = _meta(item)
                    versions[str(meta.get("uid"))] = _version(meta.get("resourceVersion"))
                    missing = _unfinalized(meta, self.finalizer)
                    if missing is not None:
                        unfinalized.append(missing)
                page_meta = _meta(page)
                token = str(page_meta.get("continue") or "")
                version = _version(page_meta.get("resourceVersion"))
                if version is not None and not token:
                    list_version = version if list_version is None else min(list_version, version)
                if not token:
                    break
        return TermList(versions, list_version, tuple(unfinalized))

    def _read(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        meta = _meta(body)
        path = application_path(str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        try:
            found = self.client.request("read", "GET", path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return found if isinstance(found, Mapping) else None


def still_there(client: ClusterClient, meta: Mapping[str, Any], uid: str) -> bool:
    """Whether the Application ``meta`` names still exists with ``uid``: one GET; a failed read
    other than a 404 counts as "still there" (nothing is decided on a read that did not answer)."""
    path = application_path(str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    try:
        found = client.request("read", "GET", path)
    except ApiError as error:
        return error.status != 404
    return bool((found.get("metadata") or {}).get("uid") == uid)
