"""Pausing Python's cyclic garbage collector while a transform runs (docs/transform.md#transform-cost).

A transform allocates many small, short-lived containers (one object tree per component, the
ordering's edges); every few hundred allocations the collector scans the young objects, and its
older generations rescan everything the transform has built so far, so a document of 10,000
components spent a growing share of its time in collections that free nothing (reference
counting frees these trees; they hold no cycles that must go before the transform ends). The
collector is paused while at least one transform runs in the process and resumes when the last
one ends, if it was running before; a cycle made meanwhile is collected by the next collection.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["collection_paused", "without_collection"]

_lock = threading.Lock()
_active = 0
_resume = False

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic collector is off inside; nested and concurrent uses count, the last one out
    turns it back on (only if it was on when the first came in)."""
    global _active, _resume
    with _lock:
        if _active == 0:
            _resume = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _resume:
                gc.enable()


def without_collection(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` runs with the collector paused (``collection_paused``)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with collection_paused():
            return function(*args, **kwargs)

    return paused
