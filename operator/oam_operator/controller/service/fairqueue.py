"""Waiting passes, queued per namespace and served round-robin (docs/operator.md#fair-queues).

Why: with one first-come-first-served queue, a namespace that creates 200 Applications at once
puts 200 passes ahead of every other tenant's next pass. Here each key (the Application's
namespace) has its own first-in-first-out queue, and the keys with waiting entries take turns:
``pop`` serves the first entry of the key whose turn it is, then moves that key to the back of
the ring. An entry that arrives for a key with nothing waiting joins the ring at the back, so it
is served after at most one entry of every other waiting key, however deep their queues are.

Pure and single-threaded (``passlimiter.py`` calls it on the event loop; ``len``, ``keys`` and
``deepest`` copy in one step, so a metrics scrape may call them from its thread); ordered dicts keep
the ring, so ``push`` and ``pop`` are O(1) and ``remove`` O(depth of its key).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

__all__ = ["FairQueue"]

T = TypeVar("T")


class FairQueue(Generic[T]):
    """Entries queued per key; ``pop`` takes the keys in turn, one entry per turn."""

    def __init__(self) -> None:
        #: Keys with waiting entries, in the order of their next turn (the first key's turn is now).
        self._ring: dict[str, collections.deque[T]] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        """Every waiting entry, key by key (not the order of service)."""
        for queue in self._ring.values():
            yield from queue

    def push(self, key: str, entry: T) -> None:
        """Queue ``entry`` at the back of ``key``'s queue; a key new to the ring takes the last turn."""
        queue = self._ring.get(key)
        if queue is None:
            queue = self._ring[key] = collections.deque()
        queue.append(entry)
        self._size += 1

    def pop(self, skip: Callable[[T], bool] = lambda _: False) -> tuple[str, T] | None:
        """The next entry to serve and its key (``None`` when empty); entries for which ``skip``
        is true (cancelled waiters) are dropped without using a turn."""
        while self._ring:
            key = next(iter(self._ring))
            queue = self._ring[key]
            entry = queue.popleft()
            self._size -= 1
            if skip(entry):  # its turn is not used up
                if not queue:
                    del self._ring[key]
                continue
            del self._ring[key]
            if queue:
                self._ring[key] = queue  # to the back of the ring
            return key, entry
        return None

    def remove(self, key: str, entry: T) -> bool:
        """Take ``entry`` out of ``key``'s queue (a waiter that gave up); False when not there."""
        queue = self._ring.get(key)
        if queue is None:
            return False
        try:
            queue.remove(entry)
        except ValueError:
            return False
        self._size -= 1
        if not queue:
            del self._ring[key]
        return True

    def depth(self, key: str) -> int:
        queue = self._ring.get(key)
        return len(queue) if queue is not None else 0

    def keys(self) -> list[str]:
        """The keys with waiting entries, in the order of their next turns."""
        return list(self._ring)

    def deepest(self) -> int:
        """The length of the longest queue (0 when empty)."""
        return max((len(queue) for queue in tuple(self._ring.values())), default=0)
