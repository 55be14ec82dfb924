"""The scheduler of the Application loops: their wake-ups, one lock per Application, the bound on
passes running at once and the threads they run in (docs/operator.md#fair-queues)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.reconciler.accounting import RequestAccounting

from .metrics import OperatorMetrics
from .passlimiter import PassLimiter
from .wakeups import Wakeups


class Scheduler:
    """Wake events, locks and the concurrency bound of the Application loops. The limiter is
    adaptive unless ``--adaptive-concurrency=off``: every request of the operator's clients
    (``accounting``) feeds it."""

    def __init__(self, settings: Settings, wakeups: Wakeups, *, metrics: OperatorMetrics | None,
                 accounting: RequestAccounting) -> None:
        self.wakeups = wakeups
        self.locks: dict[str, asyncio.Lock] = {}
        gauge = metrics.concurrency_limit if metrics is not None else None
        self.limiter = PassLimiter(settings.max_concurrent_reconciles, adaptive=settings.adaptive_concurrency,
                                   on_change=gauge.set if gauge is not None else None)
        if settings.adaptive_concurrency:
            accounting.observers.append(self.limiter.observe_request)
        if metrics is not None:
            metrics.watch_pass_queue(self.limiter)
        self.pool = ThreadPoolExecutor(settings.max_concurrent_reconciles + 2, thread_name_prefix="oam-pass")

    def wake_event(self, uid: str) -> asyncio.Event:
        return self.wakeups.event(uid)

    def lock(self, uid: str) -> asyncio.Lock:
        return self.locks.setdefault(uid, asyncio.Lock())

    def forget(self, uid: str) -> None:
        self.wakeups.forget(uid)
        self.locks.pop(uid, None)

    async def drain(self) -> None:
        """Wait for every running pass to end, then stop the pass threads (the operator exits)."""
        for lock in list(self.locks.values()):
            async with lock:
                pass
        self.pool.shutdown(wait=True)
