"""Bounded fan-out on a shared thread pool (docs/reconciler.md#concurrency-and-rate-limiting).

The pool is shared by every reconciler of the process; each call bounds its own share with a
semaphore, so one large Application cannot starve the others and a call never has more than
``limit`` operations in flight.

The calls running at the same time on one pool share ``limit`` between them: each fans out to
``limit`` divided by their number (at least one, which runs its tasks on the caller's thread).
Many passes writing at once already keep the API server busy, and handing each task to a pool
thread then only costs switches between threads: measured at 1,000 Applications × 10 objects,
a tenth of the operator's CPU to Ready, for no gain in time (docs/reconciler.md#concurrency-and-rate-limiting).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Outcome", "default_executor", "fan_out", "run_bounded"]

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


class _Callers:
    """How many ``run_bounded`` calls are running on each pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[int, int] = {}

    def enter(self, executor: Executor) -> int:
        """Count one more call on ``executor``; the number running now, this one included."""
        with self._lock:
            count = self._counts.get(id(executor), 0) + 1
            self._counts[id(executor)] = count
            return count

    def leave(self, executor: Executor) -> None:
        with self._lock:
            count = self._counts[id(executor)] - 1
            if count:
                self._counts[id(executor)] = count
            else:
                del self._counts[id(executor)]


_callers = _Callers()


def fan_out(limit: int, callers: int) -> int:
    """The share of ``limit`` one of ``callers`` calls running at once takes (at least 1)."""
    return max(1, limit // max(1, callers))


def run_bounded(executor: Executor, tasks: Sequence[Callable[[], T]], limit: int) -> list[Outcome[T]]:
    """Run ``tasks`` with at most ``limit`` in flight, shared with the calls running on the same
    pool at the same time (see the module); outcomes in task order."""
    if limit <= 1 or len(tasks) <= 1:
        return [_call(task) for task in tasks]
    width = fan_out(limit, _callers.enter(executor))
    try:
        if width == 1:
            return [_call(task) for task in tasks]
        return _in_pool(executor, tasks, width)
    finally:
        _callers.leave(executor)


def _in_pool(executor: Executor, tasks: Sequence[Callable[[], T]], limit: int) -> list[Outcome[T]]:
    slots = threading.BoundedSemaphore(limit)
    futures: list[Future[Outcome[T]]] = []
    for task in tasks:
        slots.acquire()
        future = executor.submit(_call, task)
        future.add_done_callback(lambda _f: slots.release())
        futures.append(future)
    return [f.result() for f in futures]
