"""Background work that steps aside while an urgent pass runs (docs/operator.md#a-quiet-restart).

At a start the watches of owned objects list every kind at once: at 1,000 Applications × 10
objects, 10,000 ConfigMaps in 20 pages, each object's field sets and compact copy computed in
Python. Those threads keep the interpreter busy for about two seconds, and a pass that waits on
the network between its requests gets the interpreter back only after them, again and again: a
changed Application's apply pass took 1.0 s where a warm operator takes 0.03 s. So the passes say
when an urgent one (not routine: a new, changed or woken Application) runs, and such background
work waits, between two objects, until none does, within a budget per LIST: a fleet changed all
at once delays the listing by the budget, not by its whole length. The settled Applications
waiting for that listing were going to wait behind the urgent passes anyway (passlimiter.py).

kopf's first LIST of the Applications is the other such work, on the event loop: the settled
ones, handed on after the others, cost kopf about a millisecond each (their daemons, their
handlers), a second for 1,000 at once. They go to kopf in chunks, with a ``Pacer`` between two
(kopftuning.py), whose budget is smaller: kopf starts its watch only once it has them all.
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["HAND_ON_BUDGET", "LIST_YIELD_BUDGET", "Pacer", "Urgency", "Yielder"]

#: The most one LIST of owned objects waits for urgent passes in all, in seconds.
LIST_YIELD_BUDGET = 5.0
#: The most kopf's handing on of one LIST's settled Applications waits for them in all, in seconds:
#: kopf starts its watch only after it, so a new Application made meanwhile waits as long.
HAND_ON_BUDGET = 2.0
#: How often a waiting ``Pacer`` looks again, in seconds (it runs on the event loop, which must not block).
PACER_POLL = 0.01


class Urgency:
    """How many urgent passes run now; thread-safe (passes start and end in their own threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._quiet = threading.Event()
        self._quiet.set()

    @property
    def running(self) -> int:
        return self._running

    def started(self) -> None:
        with self._lock:
            self._running += 1
            self._quiet.clear()

    def ended(self) -> None:
        with self._lock:
            self._running = max(self._running - 1, 0)
            if not self._running:
                self._quiet.set()

    def wait_quiet(self, timeout: float) -> bool:
        """Whether no urgent pass runs, waiting for that at most ``timeout`` seconds."""
        return self._quiet.wait(timeout)

    def yielder(self, budget: float = LIST_YIELD_BUDGET) -> Yielder:
        """A fresh budget of waiting, for one piece of background work (one LIST)."""
        return Yielder(self, budget)

    def pacer(self, budget: float = HAND_ON_BUDGET) -> Pacer:
        """``yielder`` for work on the event loop (kopf's handing on of a LIST, kopftuning.py)."""
        return Pacer(self, budget)


class _Budget:
    """What a ``Yielder`` and a ``Pacer`` share: the urgency they watch and the seconds of waiting
    left to them (``waited``: spent so far)."""

    def __init__(self, urgency: Urgency, budget: float) -> None:
        self._urgency = urgency
        self._left = budget
        self.waited = 0.0

    def _needed(self) -> bool:
        """Whether to wait now: an urgent pass runs and some budget is left."""
        return self._left > 0 and self._urgency.running > 0

    def _spend(self, started: float) -> None:
        spent = time.monotonic() - started
        self._left -= spent
        self.waited += spent


class Yielder(_Budget):
    """Called between two steps of background work: returns at once while no urgent pass runs,
    else once none does, until ``budget`` seconds were spent waiting in all."""

    def __call__(self) -> None:
        if not self._needed():
            return
        started = time.monotonic()
        self._urgency.wait_quiet(self._left)
        self._spend(started)


class Pacer(_Budget):
    """``Yielder`` on the event loop: awaited between two steps, it sleeps while an urgent pass
    runs, until ``budget`` seconds were spent in all."""

    async def __call__(self) -> None:
        if not self._needed():
            return
        started = time.monotonic()
        while self._urgency.running and time.monotonic() - started < self._left:
            await asyncio.sleep(PACER_POLL)
        self._spend(started)
