"""The controller the kopf handlers act through, built complete before kopf runs
(docs/operator.md#running-on-kopf): the runtime, the scheduler of the Application loops and
their wake-ups, leader election, the admission webhook and the deletion handler's bookkeeping.

Built in ``run_operator`` with the event loop kopf is then given, so nothing in it waits for a
startup handler to be filled in; the startup handler only starts what runs (the election, the
watches, the webhook's server) and the cleanup handler stops it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field

import kopf

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.oam.remote.addresses import parse_networks

from .deletionwaits import DeletionWaits
from .leaderelection import LeaseTimings
from .leadership import Leadership
from .notifier import Notifier
from .notifysend import notification_policy
from .runtime import Runtime
from .scheduler import Scheduler
from .wakeups import Wakeups
from .webhook import Webhook

log = logging.getLogger("oam_operator.controller")

#: seconds a settled Application's first pass waits at most for the watches' first LISTs
LISTED_WAIT = 120.0
#: seconds the start waits at most for the first election round before kopf's watches begin
FIRST_ROUND_WAIT = 5.0


@dataclass
class Controller:
    """What the kopf handlers close over. ``leadership`` is ``None`` without leader election,
    ``webhook`` without admission; ``led`` is set while this instance leads."""

    settings: Settings
    runtime: Runtime
    wakeups: Wakeups
    scheduler: Scheduler
    leadership: Leadership | None
    webhook: Webhook | None
    led: asyncio.Event = field(default_factory=asyncio.Event)
    #: Applications whose deletion is done (by this instance, or by the leader a standby waited for):
    #: kopf may call the deletion handler once more before its finalizer patch is seen (the pass's
    #: own status write is a new event), and that call must not run the delete branch again.
    gone: set[str] = field(default_factory=set)
    waits: DeletionWaits = field(default_factory=DeletionWaits)  # the deletion handler's own log line
    #: the leader's Notifications (docs/notifications.md#how-it-works); built by ``build``
    notifier: Notifier | None = None
    #: set once the watches of owned objects listed every kind (or after ``LISTED_WAIT``): a settled
    #: Application's first pass waits for it (docs/operator.md#a-quiet-restart)
    listed: asyncio.Event = field(default_factory=asyncio.Event)
    _waiting_listed: asyncio.Task[None] | None = None

    @classmethod
    def build(cls, settings: Settings, loop: asyncio.AbstractEventLoop, kubeconfig: str | None = None) -> Controller:
        """Everything, in ``loop``'s terms; reads the cluster id first unless it is set (runtime.py)."""
        wakeups = Wakeups(loop)
        runtime = Runtime.create(settings, kubeconfig, waker=wakeups.from_thread)
        scheduler = Scheduler(settings, wakeups, metrics=runtime.metrics, accounting=runtime.client.accounting)
        webhook = Webhook(runtime, settings) if settings.admission else None
        led = asyncio.Event()
        leadership = _leadership(runtime, loop, led, wakeups)
        notifier = Notifier(runtime.pass_client, leadership.leading if leadership is not None else lambda: True,
                            notification_policy(parse_networks(settings.notification_allowed_networks)), loop,
                            shard_label=settings.shard_label, shard=settings.shard)
        if leadership is not None:
            leadership.on_leading(notifier.wake_all_from_thread)
        return cls(settings, runtime, wakeups, scheduler, leadership, webhook, led, notifier=notifier)

    async def start(self, kopf_settings: kopf.OperatorSettings) -> None:
        """The startup handler's work: the election first (nothing passes before it leads), the watches, the webhook."""
        gauge = self.runtime.metrics.leader.labels(shard=self.settings.shard) if self.runtime.metrics else None
        if self.leadership is not None:
            self.leadership.start()
            # kopf's watches begin when this returns: after the first round, a process that leads
            # from its start has kopf list its Applications in its term (freshview.py).
            await asyncio.get_running_loop().run_in_executor(None, self.leadership.first_round, FIRST_ROUND_WAIT)
        elif gauge is not None:
            gauge.set(1)
        await asyncio.get_running_loop().run_in_executor(None, self.runtime.start)
        self._waiting_listed = asyncio.create_task(self._until_listed())
        if self.webhook is not None:
            await self.webhook.start(kopf_settings)

    async def _until_listed(self) -> None:
        started = time.monotonic()
        complete = await asyncio.get_running_loop().run_in_executor(None, self.runtime.wait_listed, LISTED_WAIT)
        self.listed.set()
        log.info("owned objects listed" if complete else "owned objects not all listed; settled Applications go on",
                 extra={"fields": {"seconds": round(time.monotonic() - started, 1)}})

    async def stop(self) -> None:
        """The cleanup handler's work: the webhook, then the last passes, then the Lease (so the
        standby may start at once)."""
        if self.webhook is not None:
            await self.webhook.stop()
        if self.notifier is not None:
            await self.notifier.stop()
        await self.scheduler.drain()
        if self.leadership is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.leadership.release)
        self.runtime.close()

    def leading(self) -> bool:
        return self.leadership is None or self.leadership.leading()


def _leadership(runtime: Runtime, loop: asyncio.AbstractEventLoop, led: asyncio.Event,
                wakeups: Wakeups) -> Leadership | None:
    """The election for this shard's Lease, not started yet, fencing the passes; ``None`` when it is off."""
    settings = runtime.settings
    if not settings.elects or runtime.lease_client is None:
        return None
    namespace = settings.lease_namespace(os.environ)
    if not namespace:  # ``run`` refuses this at start already (Settings.combination_error)
        raise RuntimeError("--leader-election needs the operator's namespace (--operator-namespace)")
    gauge = runtime.metrics.leader.labels(shard=settings.shard) if runtime.metrics is not None else None

    def lost() -> None:  # in an election thread; the fence refuses every pass request already
        loop.call_soon_threadsafe(led.clear)  # the loops wait for the next acquisition
        runtime.stand_down()

    def leading() -> None:
        runtime.took_over()  # a new term: kopf's copies are checked before they are acted on (freshview.py)
        loop.call_soon_threadsafe(led.set)
        wakeups.all_from_thread()  # a loop asleep until its requeue passes now, from fresh reads

    leadership = Leadership.create(runtime.lease_client, namespace, settings.lease_name,
                                   LeaseTimings(*settings.lease_timings), on_lost=lost,
                                   on_role=(lambda leads: gauge.set(1 if leads else 0)) if gauge else None)
    runtime.fence(leadership.leading)
    leadership.on_leading(leading)
    return leadership
