"""The bound on passes running at once, as an asyncio primitive (docs/operator.md#adaptive-concurrency).

``PassLimiter`` replaces a fixed semaphore: a pass holds a slot (``async with limiter.slot(key)``)
while it runs, and slots are granted while fewer than ``limit`` are held: in arrival order within
one key (the Application's namespace), the keys in turn (``fairqueue.py``,
docs/operator.md#fair-queues). A *routine* pass (``slot(key, routine=True)``: a settled
Application's pass that nobody asked for, its first after a start or its reapply interval's) waits
in a queue of its own, served only while no other pass waits or runs: a new or changed Application
goes ahead of a fleet's confirmations, and its pass does not share the cores with them
(docs/operator.md#a-quiet-restart). Each grant is numbered; a
slot's ``Admission`` says how many passes were waiting when it arrived and how many were admitted
while it waited (the log shows it, so fairness is visible as an order, not a time). With
``adaptive`` the limit is a ``ConcurrencyLimit`` (``adaptive.py``) fed by every request's outcome
(``observe_request``, called from the worker threads) and every pass's end; without it, the
limit is the cap. A shrink never cancels a running pass: it takes effect as holders leave, since
no slot is granted until fewer than the new limit are held. A grow wakes as many waiters as it
frees slots.

Threads: the limiter lives on the event loop; only ``observe_request`` is called from other
threads. The limit's state is guarded by a lock. Requests can only shrink the limit (a
throttled request), which needs no wake-up; it grows only when a pass ends, on the loop, which
then grants the freed slots itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from oam_operator.reconciler.accounting import RequestTiming

from .adaptive import ConcurrencyLimit
from .fairqueue import FairQueue

__all__ = ["Admission", "PassLimiter"]


@dataclass(frozen=True)
class Admission:
    """How one slot was granted: ``number`` counts grants from 1; ``arrived_after`` grants had
    been made when it asked; ``waiting_ahead`` passes were waiting then; ``queued_seconds`` it waited."""

    key: str
    number: int
    arrived_after: int
    waiting_ahead: int
    queued_seconds: float

    @property
    def overtaken_by(self) -> int:
        """Passes admitted while this one waited (with fair queues: at most one per other waiting key)."""
        return self.number - self.arrived_after - 1

    def log_fields(self) -> dict[str, object]:
        return {"admission": self.number, "waiting_ahead": self.waiting_ahead,
                "overtaken_by": self.overtaken_by, "queued_seconds": round(self.queued_seconds, 3)}


def _done(waiter: asyncio.Future[int]) -> bool:
    return waiter.done()


class PassLimiter:
    def __init__(
        self,
        cap: int,
        *,
        adaptive: bool = True,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[int], None] | None = None,
        initial: int | None = None,
    ) -> None:
        self.cap = cap
        self.adaptive = adaptive
        self._clock = clock
        self._on_change = on_change
        self._state = ConcurrencyLimit(cap, clock=clock, initial=initial) if adaptive else None
        self._lock = threading.Lock()
        self._holders = 0
        self._urgent = 0  # holders of a pass that is not routine: no routine pass is admitted meanwhile
        self._waiters: FairQueue[asyncio.Future[int]] = FairQueue()
        self._routine: FairQueue[asyncio.Future[int]] = FairQueue()  # served when ``_waiters`` is empty
        self._granted = 0  # grants so far: the last Admission.number
        self._reported = self.limit
        if on_change is not None:
            on_change(self._reported)

    @property
    def limit(self) -> int:
        """Passes allowed at once now (the cap when not adaptive)."""
        with self._lock:
            return self._state.limit if self._state is not None else self.cap

    @property
    def state(self) -> ConcurrencyLimit | None:
        """The adaptive limit's state (``None`` when fixed); read it on the loop, for logs and tests."""
        return self._state

    @property
    def holders(self) -> int:
        return self._holders

    @property
    def urgent_holders(self) -> int:
        """Slots held by passes that are not routine."""
        return self._urgent

    @property
    def waiting(self) -> int:
        return sum(1 for queue in (self._waiters, self._routine) for waiter in queue if not waiter.done())

    @property
    def queued(self) -> int:
        """Passes in the queues (a cancelled waiter leaves at once); any thread may read it."""
        return len(self._waiters) + len(self._routine)

    @property
    def waiting_routine(self) -> int:
        """Routine passes waiting (behind every other pass)."""
        return sum(1 for waiter in self._routine if not waiter.done())

    @property
    def waiting_keys(self) -> int:
        """Keys (namespaces) with passes waiting."""
        return len(set(self._waiters.keys()) | set(self._routine.keys()))

    @property
    def deepest(self) -> int:
        """Passes waiting in the longest queue of one key."""
        return max(self._waiters.deepest(), self._routine.deepest())

    # -- slots (on the event loop) ---------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def slot(self, key: str = "", *, routine: bool = False) -> AsyncIterator[Admission]:
        """Hold one slot for the body (one pass of an Application in namespace ``key``; a
        ``routine`` one after every other waiting pass); its duration and the saturation feed the limit."""
        admission = await self.acquire(key, routine=routine)
        started = self._clock()
        try:
            yield admission
        finally:
            self.release(self._clock() - started, routine=routine)

    async def acquire(self, key: str = "", *, routine: bool = False) -> Admission:
        # ``queued``, not ``waiting``: O(1), where counting the live waiters made each of 10,000
        # start-up passes walk every queue (a cancelled waiter leaves its queue at once anyway)
        arrived, ahead, asked = self._granted, self.queued, self._clock()
        queue = self._routine if routine else self._waiters
        held_back = routine and (len(self._routine) or self._urgent)
        if not len(self._waiters) and not held_back and self._holders < self.limit:
            self._holders += 1
            self._urgent += not routine
            self._granted += 1
            return Admission(key, self._granted, arrived, 0, 0.0)
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        queue.push(key, waiter)
        self._grant()  # the waiters ahead may all be cancelled ones
        try:
            number = await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # granted, then cancelled: give it back
                self._holders -= 1
                self._urgent -= not routine
                self._grant()
            raise
        finally:
            queue.remove(key, waiter)
        return Admission(key, number, arrived, ahead, self._clock() - asked)

    def release(self, seconds: float = 0.0, *, routine: bool = False) -> None:
        """Give a slot back after a pass of ``seconds`` (``routine`` as it was acquired); grants the
        slots that are free now."""
        if self._holders <= 0:
            raise RuntimeError("PassLimiter.release() without a slot held")
        if self._state is not None:
            with self._lock:
                saturated = self._holders >= self._state.limit or self.queued > 0
                self._state.pass_finished(seconds, saturated=saturated)
                self._report()
        self._holders -= 1
        self._urgent -= not routine
        self._grant()

    def _grant(self) -> None:
        limit = self.limit
        while self._holders < limit:
            served = self._waiters.pop(skip=_done)
            if served is not None:
                self._urgent += 1
            elif not self._urgent:
                served = self._routine.pop(skip=_done)
            if served is None:
                return
            self._holders += 1
            self._granted += 1
            served[1].set_result(self._granted)

    # -- observations (any thread) ---------------------------------------------------------------

    def observe_request(self, timing: RequestTiming) -> None:
        """One request's outcome (a ``RequestAccounting`` observer); called from worker threads."""
        if self._state is None:
            return
        with self._lock:
            self._state.request_finished(timing.verb, timing.status, timing.seconds, timing.retry_after)
            self._report()

    def _report(self) -> None:
        """Tell ``on_change`` about a new limit; called with the lock held, so reports keep their order."""
        assert self._state is not None
        limit = self._state.limit
        if self._on_change is not None and limit != self._reported:
            self._reported = limit
            self._on_change(limit)
