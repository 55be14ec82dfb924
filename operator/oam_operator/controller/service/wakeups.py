"""The wake-ups of the Application loops (docs/operator.md#running-on-kopf).

Each Application's loop sleeps on one ``asyncio.Event`` until its requeue delay passes or
something wakes it: a watch event, a changed owned object, a grant, a profile. The watches run
in threads; they wake a loop through ``from_thread``, which hands the wake-up to the event loop
the loops run in, given at construction, so the object is complete before kopf starts.
"""

from __future__ import annotations

import asyncio


class Wakeups:
    """One wake event per Application uid, set from the loop's thread or any other."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._events: dict[str, asyncio.Event] = {}

    def event(self, uid: str) -> asyncio.Event:
        """The wake event of ``uid`` (in the loop's thread only)."""
        return self._events.setdefault(uid, asyncio.Event())

    def wake(self, uid: str) -> None:
        """Wake the loop of ``uid`` (in the loop's thread only)."""
        self.event(uid).set()

    def wake_all(self) -> None:
        """Wake every loop (in the loop's thread only): a new term passes each from fresh reads."""
        for event in list(self._events.values()):
            event.set()

    def from_thread(self, uid: str) -> None:
        """Wake the loop of ``uid`` from any thread (a watch's, the election's)."""
        self._loop.call_soon_threadsafe(self.wake, uid)

    def all_from_thread(self) -> None:
        self._loop.call_soon_threadsafe(self.wake_all)

    def forget(self, uid: str) -> None:
        self._events.pop(uid, None)
