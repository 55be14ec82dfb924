"""The wake-ups of the Application loops (docs/operator.md#running-on-kopf).

Each Application's loop sleeps on one ``asyncio.Event`` until its requeue delay passes or
something wakes it: a watch event, a changed owned object, a grant, a profile. The watches run
in threads; they wake a loop through ``from_thread``, which hands the wake-up to the event loop
the loops run in, given at construction, so the object is complete before kopf starts.

A wake-up of every loop (``wake_all``: a new term of leadership) asks for a pass but says nothing
changed: for a settled Application that pass stays *routine* (``asked`` is false), behind the
passes something did ask for (docs/operator.md#a-quiet-restart).
"""

from __future__ import annotations

import asyncio


class Wakeups:
    """One wake event per Application uid, set from the loop's thread or any other."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._events: dict[str, asyncio.Event] = {}
        self._routine: set[str] = set()  # set by ``wake_all`` only, nothing more asked since

    def event(self, uid: str) -> asyncio.Event:
        """The wake event of ``uid`` (in the loop's thread only)."""
        return self._events.setdefault(uid, asyncio.Event())

    def wake(self, uid: str) -> None:
        """Wake the loop of ``uid`` (in the loop's thread only)."""
        self._routine.discard(uid)
        self.event(uid).set()

    def wake_all(self) -> None:
        """Wake every loop (in the loop's thread only): a new term passes each from fresh reads."""
        for uid, event in list(self._events.items()):
            if not event.is_set():
                self._routine.add(uid)
                event.set()

    def asked(self, uid: str) -> bool:
        """Whether the loop of ``uid`` was woken by something other than ``wake_all`` since its last pass."""
        event = self._events.get(uid)
        return event is not None and event.is_set() and uid not in self._routine

    def clear(self, uid: str) -> None:
        """A pass of ``uid`` starts: what woke it is being handled."""
        self._routine.discard(uid)
        self.event(uid).clear()

    def from_thread(self, uid: str) -> None:
        """Wake the loop of ``uid`` from any thread (a watch's, the election's)."""
        self._loop.call_soon_threadsafe(self.wake, uid)

    def all_from_thread(self) -> None:
        self._loop.call_soon_threadsafe(self.wake_all)

    def forget(self, uid: str) -> None:
        self._events.pop(uid, None)
        self._routine.discard(uid)
