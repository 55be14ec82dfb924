"""A process-wide token bucket through which every API request passes
(docs/reconciler.md#concurrency-and-rate-limiting).

Like client-go's flowcontrol limiter: ``qps`` tokens per second, at most ``burst`` saved up.
Waiters reserve a token under the lock and sleep outside it, so concurrent callers are served
in arrival order without holding the lock while sleeping.

Background requests (the reconciler's Events, docs/reconciler.md#events-on-dependent-objects) use ``acquire_idle()``:
they take a
token only when no other request is waiting for one, so they spend idle budget and never push
a reconcile's own requests back; after ``patience`` seconds they queue like everyone else, so
they cannot starve either.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["RateLimiter", "configure_default_rate_limiter", "default_rate_limiter"]


class RateLimiter:
    """Token bucket; ``qps <= 0`` disables limiting."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep
        self._qps = 0.0
        self._burst = 1
        self._tokens = 0.0
        self._last = clock()
        self.configure(qps, burst)

    @property
    def qps(self) -> float:
        return self._qps

    @property
    def burst(self) -> int:
        return self._burst

    def configure(self, qps: float, burst: int) -> None:
        """Change the rates; the bucket starts full (as a new client-go limiter does)."""
        if burst < 1:
            raise ValueError("burst must be at least 1")
        with self._lock:
            self._qps = qps
            self._burst = burst
            self._tokens = float(burst)
            self._last = self._clock()

    def acquire(self) -> float:
        """Take one token, sleeping until it is available; returns the time slept."""
        with self._lock:
            if self._qps <= 0:
                return 0.0
            now = self._clock()
            self._tokens = min(float(self._burst), self._tokens + (now - self._last) * self._qps)
            self._last = now
            self._tokens -= 1.0
            wait = 0.0 if self._tokens >= 0 else -self._tokens / self._qps
        if wait > 0:
            self._sleep(wait)
        return wait

    def acquire_idle(self, patience: float = 10.0) -> float:
        """Take one token when one is free and nobody is queued for it (``acquire()``'s waiters
        hold reservations that drive the bucket below one token); poll until then, and after
        ``patience`` seconds queue like ``acquire()``. Returns the time slept."""
        waited = 0.0
        while True:
            with self._lock:
                if self._qps <= 0:
                    return waited
                now = self._clock()
                self._tokens = min(float(self._burst), self._tokens + (now - self._last) * self._qps)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                if waited >= patience:
                    break
                # Until one whole token is free again if nobody else took it, at least 1 ms.
                pause = min(max((1.0 - self._tokens) / self._qps, 0.001), patience - waited)
            self._sleep(pause)
            waited += pause
        return waited + self.acquire()


_default = RateLimiter(qps=50.0, burst=100)


def default_rate_limiter() -> RateLimiter:
    """The process-wide limiter shared by every client that is not given its own."""
    return _default


def configure_default_rate_limiter(qps: float, burst: int) -> None:
    """Set the process-wide rates (the operator's ``kube-api-qps`` and ``kube-api-burst``)."""
    _default.configure(qps, burst)
