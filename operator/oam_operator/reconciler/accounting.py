"""Request accounting: every HTTP request counted by verb, method and status code.

Tests and benchmarks count requests instead of assuming them (steady state = zero writes);
the operator exports the same numbers as metrics. The in-flight high-water mark shows that
a call never exceeds its concurrency bound. ``observers`` see each answered request's latency
and ``Retry-After`` (docs/reconciler.md#the-cluster-client; the operator adapts its concurrency to them).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["READ_METHODS", "WRITE_METHODS", "RequestAccounting", "RequestRecord", "RequestTiming"]

READ_METHODS = frozenset({"GET", "HEAD"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class RequestRecord:
    """One finished request: ``verb`` is ours (get, list, create, apply, …), ``status`` the
    HTTP code (0 when no response arrived)."""

    verb: str
    method: str
    status: int


@dataclass(frozen=True)
class RequestTiming:
    """One request that got a response: its latency (from sending, after the rate limiter, to
    the end of the body) and the server's ``Retry-After`` in seconds, if any."""

    verb: str
    method: str
    status: int
    seconds: float
    retry_after: float | None = None


class RequestAccounting:
    """Thread-safe counters; ``listeners`` see every record (for metrics), ``observers`` every
    timing (called on the requesting thread, so they must be thread-safe and quick)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[RequestRecord] = Counter()
        self._in_flight = 0
        self._max_in_flight = 0
        self.listeners: list[Callable[[RequestRecord], None]] = []
        self.observers: list[Callable[[RequestTiming], None]] = []

    def started(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def finished(self, verb: str, method: str, status: int) -> None:
        record = RequestRecord(verb, method, status)
        with self._lock:
            self._in_flight -= 1
            self._counts[record] += 1
        for listener in self.listeners:
            listener(record)

    def timed(self, timing: RequestTiming) -> None:
        """Pass one answered request's timing to the observers (after ``finished``)."""
        for observer in self.observers:
            observer(timing)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._max_in_flight = self._in_flight

    def snapshot(self) -> dict[RequestRecord, int]:
        with self._lock:
            return dict(self._counts)

    def count(self, *, verb: str | None = None, method: str | None = None, status: int | None = None) -> int:
        """Requests matching every given filter."""
        with self._lock:
            return sum(
                n
                for r, n in self._counts.items()
                if (verb is None or r.verb == verb)
                and (method is None or r.method == method)
                and (status is None or r.status == status)
            )

    @property
    def total(self) -> int:
        return self.count()

    @property
    def reads(self) -> int:
        with self._lock:
            return sum(n for r, n in self._counts.items() if r.method in READ_METHODS)

    @property
    def writes(self) -> int:
        with self._lock:
            return sum(n for r, n in self._counts.items() if r.method in WRITE_METHODS)

    @property
    def max_in_flight(self) -> int:
        """Highest number of concurrent requests since the last ``reset()``."""
        with self._lock:
            return self._max_in_flight

    def by_verb(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        with self._lock:
            for r, n in self._counts.items():
                out[r.verb] += n
        return dict(out)
