"""Bounded fan-out on a shared thread pool (docs/reconciler.md#concurrency-and-rate-limiting).

The pool is shared by every reconciler of the process; each call bounds its own share with a
semaphore, so one large Application cannot starve the others and a call never has more than
``limit`` operations in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Outcome", "default_executor", "run_bounded"]

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The result of one task, or the exception it raised."""

    value: T | None = None
    error: Exception | None = None


_default_lock = threading.Lock()
_default: ThreadPoolExecutor | None = None


def default_executor() -> ThreadPoolExecutor:
    """The process-wide pool used by clients that are not given their own."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ThreadPoolExecutor(max_workers=16, thread_name_prefix="oam-reconciler")
        return _default


def _call(task: Callable[[], T]) -> Outcome[T]:
    try:
        return Outcome(value=task())
    except Exception as exc:  # collected per task; the caller decides which one to raise
        return Outcome(error=exc)


def run_bounded(executor: Executor, tasks: Sequence[Callable[[], T]], limit: int) -> list[Outcome[T]]:
    """Run ``tasks`` with at most ``limit`` in flight; outcomes in task order."""
    if limit <= 1 or len(tasks) <= 1:
        return [_call(task) for task in tasks]
    slots = threading.BoundedSemaphore(limit)
    futures: list[Future[Outcome[T]]] = []
    for task in tasks:
        slots.acquire()
        future = executor.submit(_call, task)
        future.add_done_callback(lambda _f: slots.release())
        futures.append(future)
    return [f.result() for f in futures]
