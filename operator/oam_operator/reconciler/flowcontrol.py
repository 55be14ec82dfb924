"""Server-side flow control detection: a client-side limit only where the server has none.

Every supported Kubernetes version runs API Priority and Fairness (APF): the API server
queues and sheds load itself, per flow, and tells an overloaded client so with 429 and
``Retry-After`` (which the client raises as a retryable error carrying the delay,
docs/reconciler.md#concurrency-and-rate-limiting, docs/reconciler.md#errors).
A client-side token bucket in front of such a server only throttles a client the server
would have served. An APF server marks every response it classified with the headers
``X-Kubernetes-PF-FlowSchema-UID`` and ``X-Kubernetes-PF-PriorityLevel-UID``.

``FlowControl`` watches the responses of a ``ClusterClient``: with ``adaptive`` set, the first
response that carries either header turns the shared ``RateLimiter`` off for good (the server
stays the same for the life of the client); a server without APF keeps the bucket. With
``adaptive`` unset (an explicitly configured limit), it only records what it saw. kpt and
client-go's own ``kubectl`` do the same.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .ratelimit import RateLimiter

__all__ = ["APF_HEADERS", "FlowControl", "has_priority_and_fairness"]

log = logging.getLogger("oam_operator.reconciler")

APF_HEADERS = ("X-Kubernetes-PF-FlowSchema-UID", "X-Kubernetes-PF-PriorityLevel-UID")
_LOWER = tuple(name.lower() for name in APF_HEADERS)


def has_priority_and_fairness(headers: Mapping[str, Any] | None) -> bool:
    """Whether response ``headers`` show API Priority and Fairness (either header, any case)."""
    if not headers:
        return False
    getter = getattr(headers, "get", None)
    if getter is not None and any(getter(name) for name in APF_HEADERS):
        return True
    return any(str(key).lower() in _LOWER and value for key, value in headers.items())


class FlowControl:
    """Turns ``limiter`` off once the server shows APF (``adaptive``); thread-safe."""

    def __init__(self, limiter: RateLimiter, *, adaptive: bool) -> None:
        self.limiter = limiter
        self.adaptive = adaptive
        self._lock = threading.Lock()
        self._detected = False

    @property
    def detected(self) -> bool:
        """Whether a response carried the APF headers."""
        return self._detected

    @property
    def client_side_limit(self) -> bool:
        """Whether the token bucket still paces requests."""
        return self.limiter.qps > 0

    def observe(self, headers: Mapping[str, Any] | None) -> None:
        """Look at one response's headers (cheap once detected)."""
        if self._detected or not has_priority_and_fairness(headers):
            return
        with self._lock:
            if self._detected:
                return
            self._detected = True
            if self.adaptive and self.limiter.qps > 0:
                self.limiter.configure(0.0, self.limiter.burst)
                log.info("the API server runs API Priority and Fairness: client-side rate limit off; "
                         "the server's flow control and 429 Retry-After pace requests")
