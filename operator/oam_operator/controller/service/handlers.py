"""kopf handlers: thin glue between kopf and the passes (docs/operator.md#running-on-kopf).

The apply branch runs in a per-Application daemon loop, woken on demand; the delete branch
in a non-optional deletion handler. Change-detecting handlers are deliberately not used for
applying (their retries cost two writes per requeue). Every blocking call runs in a worker
thread; a per-Application lock keeps the two branches from overlapping, and a limiter
bounds the passes running at once (``passlimiter.py``: adaptive, up to
``--max-concurrent-reconciles``) and admits waiting passes per namespace in turn
(docs/operator.md#fair-queues).

Sharding (``sharding.py``): the Application watch carries the instance's shard label
selector (server-side) and every Application handler the same filter, so an instance sees
and reconciles only its own Applications; an Application relabelled to another
shard stops its loop here (kopf's filter mismatch) and its memory is dropped, so a later
return starts from the persisted status, never from a stale cache.

Leader election (``leadership.py``, docs/operator.md#leader-election): every handler runs on a
standby too, but the apply loop and the deletion handler wait until this instance leads before
a pass (``_until_leading``), so a standby keeps kopf's liveness, the webhook and its caches and
reconciles nothing. The cleanup handler gives the Lease up only after the last pass ended.
A leader that loses the Lease stops its passes, forgets (``Runtime.stand_down``) and stands by
again in the same process; on every acquisition every loop is woken for a pass from fresh reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Mapping
from typing import Any

import kopf

from oam_operator.api.conditions import ready_condition
from oam_operator.api.meta import GROUP, VERSION
from oam_operator.controller.reconcile.settings import Settings

from ..reconcile.application import seen, settled
from ..reconcile.sharding import shard_selector
from . import kopftuning
from .bodies import snapshot
from .controller import Controller
from .definitions import PLURALS
from .deletionwaits import KopfRetryFilter
from .diffbase import StatelessDiffBaseStorage
from .freshview import still_there
from .incluster import connection_info
from .leadership import Leadership

log = logging.getLogger("oam_operator.controller")

DELETION_RECHECK = 5.0  # seconds between a standby's checks that an Application being deleted still exists
#: Applications per page of kopf's first LIST (docs/operator.md#memory)
LIST_PAGE = 500
#: seconds between a standby loop's own looks at the election; ``led`` wakes it at once, so this is
#: only a safety net, long enough that 10,000 waiting loops cost a standby no CPU
LEAD_RECHECK = 10.0
#: longest wait of a loop's first pass for kopf's finalizer, which kopf patches in as it starts the
#: loop (``application_loop``); the patch's answer (or else its event) ends the wait at once
FINALIZER_WAIT = 2.0


async def _sleep(stopped: Any, wake: asyncio.Event, delay: float | None, *also: asyncio.Event) -> None:
    """Wait for the first of: the daemon being stopped, a wake-up (or one of ``also``), the requeue delay."""
    if delay is not None and delay <= 0:
        return
    waiters = [asyncio.ensure_future(event.wait()) for event in (wake, *also)]
    waiters.append(asyncio.ensure_future(stopped.wait()))
    try:
        await asyncio.wait(waiters, timeout=delay, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*waiters, return_exceptions=True)


async def _until_leading(leadership: Leadership | None, led: asyncio.Event, stopped: Any = None,
                         timeout: float | None = None) -> bool:
    """Wait until this instance leads (at once without leader election); False when ``stopped``
    first, or when ``timeout`` seconds passed."""
    if leadership is None:
        return True
    never = asyncio.Event()
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while not leadership.leading():
        if stopped is not None and stopped:
            return False
        left = LEAD_RECHECK if deadline is None else min(LEAD_RECHECK, deadline - loop.time())
        if left <= 0:
            return False
        if led.is_set():  # led and lost just now: ``led`` is cleared once the passes stopped (leadership.py)
            await asyncio.sleep(min(0.5, left))
        else:
            await _sleep(stopped if stopped is not None else never, led, left)
    return True


def shard_filter(settings: Settings) -> dict[str, Any]:
    """kopf's ``labels=`` filter of the instance's Application handlers (reconcile/sharding.py)."""
    return {settings.shard_label: settings.shard or kopf.ABSENT}


def wanted(leadership: Leadership | None, finalizer: str, meta: Mapping[str, Any]) -> bool:
    """kopf's ``when`` of the Application loop and the deletion handler: while this instance leads
    (always without leader election), or once the Application has the finalizer. kopf adds its
    finalizer only for an Application some handler wants, so only the leader adds it; one that has
    it keeps it everywhere (kopf removes a finalizer no handler wants), and a standby keeps its loop
    and deletion handler for it (docs/operator.md#leader-election)."""
    if leadership is None or leadership.leading():
        return True
    return finalizer in (meta.get("finalizers") or ())


def register(registry: kopf.OperatorRegistry, controller: Controller, settings: Settings) -> None:
    """Register every handler on ``registry``; each acts through ``controller``, built complete
    before kopf runs (controller.py). Nothing of it is read here."""
    domain = settings.domain
    requested_at = f"{domain}/requested-at"
    labels = shard_filter(settings)

    def wanted_here(meta: Mapping[str, Any], **_: Any) -> bool:
        return wanted(controller.leadership, domain, meta)

    finalized: set[str] = set()  # uids whose finalizer kopf's patch added; their first pass need not wait
    awaiting: set[str] = set()  # uids whose first pass waits for kopf's finalizer now

    def kopf_patched(patched: Mapping[str, Any]) -> None:
        """kopf's patch of an Application was answered: with the finalizer added, its loop's first
        pass goes on now rather than at the event, which a start delivers only after kopf's whole
        LIST (seconds at 10,000; docs/operator.md#a-quiet-restart). Only a loop that waits is
        woken: one whose pass already runs (the event came first) needs no second pass for it."""
        meta = patched.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if uid and domain in (meta.get("finalizers") or ()) and not meta.get("deletionTimestamp"):
            finalized.add(uid)
            if uid in awaiting:
                controller.scheduler.wake_event(uid).set()

    kopftuning.observe_patches(GROUP, "applications", kopf_patched)

    logging.getLogger("kopf.objects").addFilter(KopfRetryFilter("application_deleted"))
    if settings.admission:
        from .admission import register_admission, register_definition_admission

        register_admission(registry, lambda: controller.webhook.validator if controller.webhook else None)
        from .notifyadmission import register_notification_admission

        notifier = controller.notifier
        if notifier is not None:
            register_notification_admission(registry, lambda: notifier.policy)
        register_definition_admission(registry, lambda: controller.runtime.definitions.catalog
                                      if controller.webhook else None)

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        """In a Pod: the ServiceAccount at the Service address (``incluster.py``); elsewhere: ``$KUBECONFIG``."""
        return connection_info(kwargs.get("settings")) or kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.persistence.finalizer = domain
        settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=domain)
        # No diff base is written: the operator needs none (diffbase.py).
        settings.persistence.diffbase_storage = StatelessDiffBaseStorage()
        settings.posting.enabled = False
        settings.watching.server_timeout = 600
        settings.watching.chunk_size = LIST_PAGE  # the first LIST of 10,000 Applications in pages, not one body
        settings.networking.request_timeout = 60
        settings.queueing.worker_limit = None
        settings.watching.label_selectors[GROUP, "applications"] = shard_selector(controller.settings)
        await controller.start(settings)
        log.info("operator started", extra={"fields": {"cluster_id": controller.runtime.cluster_id}})

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        await controller.stop()

    @kopf.on.event(GROUP, VERSION, "clusterprofiles", registry=registry)
    async def profile_event(type: str | None, body: kopf.Body, name: str, **_: Any) -> None:
        for uid in controller.runtime.profile_changed(name, None if type == "DELETED" else snapshot(body)):
            controller.wakeups.wake(uid)

    @kopf.on.event(GROUP, VERSION, "notifications", registry=registry)
    async def notification_event(type: str | None, body: kopf.Body, **_: Any) -> None:
        if controller.notifier is not None:  # docs/notifications.md#how-it-works
            controller.notifier.notification_event(type, snapshot(body))

    def watch_definitions(kind: str, plural: str) -> None:
        """A definition is hot-loaded and the Applications naming its type woken (docs/definitions.md#the-operator)."""

        @kopf.on.event(GROUP, VERSION, plural, registry=registry, id=f"{plural}_event")
        async def definition_event(type: str | None, body: kopf.Body, name: str, **_: Any) -> None:
            changed = None if type == "DELETED" else snapshot(body)
            for uid in controller.runtime.definition_changed(kind, name, changed):
                controller.wakeups.wake(uid)

    for kind, plural in PLURALS.items():
        watch_definitions(kind, plural)

    @kopf.on.event(GROUP, VERSION, "applications", registry=registry, labels=labels)
    async def application_event(type: str | None, body: kopf.Body, meta: kopf.Meta, uid: str, **_: Any) -> None:
        runtime, scheduler = controller.runtime, controller.scheduler
        if controller.notifier is not None:
            controller.notifier.application_event(type, body)  # copies what it keeps
        for other in runtime.dependency_wakeups(type, body):  # app-dependency: dependants only (appindex.py)
            controller.wakeups.wake(other)
        if type == "DELETED":
            controller.gone.discard(uid)
            finalized.discard(uid)
            runtime.forget(uid, meta.get("namespace", ""), meta.get("name", ""))
            scheduler.forget(uid)
            return
        runtime.saw_generation(uid, int(meta.get("generation") or 0))  # a revision's start (timeline.py)
        memory = runtime.memory.get(uid)
        if memory is None:
            if not settled(body, requested_at):  # changed before its first pass: it does not wait
                controller.wakeups.wake(uid)
        elif memory.seen != seen(meta, requested_at):
            controller.wakeups.wake(uid)

    def initial_delay(body: kopf.Body, **_: Any) -> float:
        """A settled Application's loop starts within 2 s, spread; any other's at once: it is a new
        or changed one, which a start in front of 10,000 settled ones must not delay (its first
        pass still waits for kopf's finalizer, below; docs/operator.md#a-quiet-restart)."""
        return random.uniform(0, 2) if settled(body, requested_at) else 0.0

    # No forced cancellation: a stopped daemon finishes its current pass (and persists its
    # status) first. ``cancellation_backoff`` is how long kopf waits for that when the
    # operator exits (within the Pod's 60 s termination grace period).
    @kopf.daemon(GROUP, VERSION, "applications", registry=registry, labels=labels, when=wanted_here,
                 cancellation_timeout=None, cancellation_backoff=50, initial_delay=initial_delay)
    async def application_loop(stopped: Any, body: kopf.Body, meta: kopf.Meta, uid: str, namespace: str | None,
                               **_: Any) -> None:
        loop = asyncio.get_running_loop()
        runtime, scheduler = controller.runtime, controller.scheduler
        first = True
        while not stopped:
            wake = scheduler.wake_event(uid)
            if not await _until_leading(controller.leadership, controller.led, stopped):
                break
            # A settled Application's pass nobody asked for only confirms: its first after a start
            # waits for the watches' first LISTs, and it yields to every other waiting pass
            # (docs/operator.md#a-quiet-restart).
            wakeups = controller.wakeups
            if first and not wakeups.asked(uid) and settled(body, requested_at):
                while not controller.listed.is_set() and not stopped and not wakeups.asked(uid):
                    wakeups.clear(uid)  # a new term's wake-up: the pass it asks for comes after the wait
                    await _sleep(stopped, wake, None, controller.listed)
                if stopped:
                    break
            if first and domain not in (meta.get("finalizers") or ()):
                # kopf patches its finalizer in as it starts this loop, and that patch tests the
                # resourceVersion: a first pass's status write landing before it makes kopf patch
                # again. The finalizer's event wakes the loop (``application_event``).
                deadline = loop.time() + FINALIZER_WAIT
                awaiting.add(uid)
                try:
                    while domain not in (meta.get("finalizers") or ()) and uid not in finalized and not stopped \
                            and (left := deadline - loop.time()) > 0:
                        wake.clear()
                        await _sleep(stopped, wake, left)
                finally:
                    awaiting.discard(uid)
                if stopped:
                    break
            finalized.discard(uid)
            first = False
            routine = not wakeups.asked(uid) and settled(body, requested_at)
            async with scheduler.lock(uid), scheduler.limiter.slot(namespace or "", routine=routine) as admission:
                if stopped or meta.get("deletionTimestamp"):  # kopf's view of the body, kept current
                    break
                if not controller.leading():
                    continue  # lost while waiting for the slot
                wakeups.clear(uid)
                body_now = snapshot(body)
                try:
                    result = await loop.run_in_executor(scheduler.pool, runtime.run_apply, uid, body_now,
                                                        admission.log_fields(), routine)
                except Exception:  # a pass never ends the loop
                    log.exception("pass failed unexpectedly")
                    result = None
            if result is not None and result.gone:
                scheduler.forget(uid)  # deleted, or a namesake in its place: nothing more to do here
                break
            delay = result.delay if result is not None else 5.0
            await _sleep(stopped, wake, delay)
        reason = getattr(stopped, "reason", None)
        if reason is not None and kopf.DaemonStoppingReason.FILTERS_MISMATCH in reason:
            # Moved to another shard: that instance owns it now.
            runtime.forget(uid, meta.get("namespace", ""), meta.get("name", ""))
            scheduler.forget(uid)

    @kopf.on.delete(GROUP, VERSION, "applications", registry=registry, labels=labels, when=wanted_here,
                    optional=False, backoff=5)
    async def application_deleted(body: kopf.Body, meta: kopf.Meta, uid: str, namespace: str | None,
                                  **_: Any) -> None:
        runtime, scheduler, gone, waits = controller.runtime, controller.scheduler, controller.gone, controller.waits
        if uid in gone:
            return  # a stale event of an Application already gone (below): kopf's patch finds nothing
        leadership = controller.leadership
        if leadership is not None and not leadership.leading():
            # A standby waits here rather than retrying: a retry would write kopf's progress
            # annotations. kopf holds this Application's events while the handler waits, so whether
            # the leader finished the deletion meanwhile is asked of the API server, every few
            # seconds and once more on taking over; then the handler ends without a write.
            while True:
                leading = await _until_leading(leadership, controller.led, timeout=DELETION_RECHECK)
                if not await asyncio.get_running_loop().run_in_executor(None, still_there, runtime.client, meta,
                                                                          str(meta.get("uid") or "")):
                    gone.add(uid)
                    return
                if leading:
                    break
        loop = asyncio.get_running_loop()
        async with scheduler.lock(uid), scheduler.limiter.slot(namespace or "") as admission:
            result = await loop.run_in_executor(scheduler.pool, runtime.run_delete, uid, snapshot(body),
                                                admission.log_fields())
        if result.gone:  # deleted meanwhile (another leader finished it), or a namesake in its place
            gone.add(uid)
            waits.forget(uid)
            return
        if not result.finished:
            ready = ready_condition(result.status)
            message = str(ready.get("message", "")) if ready is not None else "deletion in progress"
            reason = str(ready.get("reason", "")) if ready is not None else ""
            delay = max(result.delay or 1.0, 0.1)
            waits.say(uid, {"namespace": meta.get("namespace"), "name": meta.get("name")}, reason, message, delay)
            raise kopf.TemporaryError(message, delay=delay)
        waits.forget(uid)
        gone.add(uid)  # done: a repeated call (an event before kopf's finalizer patch) returns at once

    @kopf.on.probe(id="applications", registry=registry)
    async def applications_probe(**_: Any) -> int:
        return len(controller.runtime.memory)

    @kopf.on.probe(id="leadership", registry=registry)
    async def leadership_probe(**_: Any) -> dict[str, Any]:
        """/healthz says whether this instance leads or stands by (liveness is 200 either way)."""
        leadership = controller.leadership
        return leadership.describe() if leadership is not None else {"role": "leader", "election": "off"}
