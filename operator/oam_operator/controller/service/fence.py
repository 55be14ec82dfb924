"""The fence of the pass requests: nothing a pass sends leaves the process unless this instance
leads at that moment (docs/operator.md#leader-election).

Every request of a pass (the reconciler's, with whatever identity; the status writes; the Events)
goes through the pass client's rate limiter immediately before it is sent. ``FencedRateLimiter``
takes the token from the operator's one bucket and then asks ``fence`` — the elector's
``leading()``, a comparison with the clock — so a request that waited for a token, or a pass that
was paused (SIGSTOP) and resumes after its Lease expired, is refused before it goes out, whether
or not the election loop has noticed yet. The refusal is a ``TransientApiError`` (reason
``NotLeader``): the pass ends as a retryable failure and writes nothing, not even its status.

The operator's own watches, the admission webhook and its certificate use the unfenced client: a
standby serves them as well as the leader.
"""

from __future__ import annotations

from collections.abc import Callable

from oam_operator.reconciler.errors import TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter

__all__ = ["NOT_LEADER", "FencedRateLimiter"]

NOT_LEADER = "this instance does not hold the Lease (leader election): the request was not sent"


def _always() -> bool:
    return True


class FencedRateLimiter(RateLimiter):
    """``inner``'s tokens, refused while ``fence()`` is false; rates and state stay ``inner``'s."""

    def __init__(self, inner: RateLimiter, fence: Callable[[], bool] = _always) -> None:
        # No bucket of its own: every method goes to ``inner`` (the flow control turns it off there).
        self.inner = inner
        self.fence = fence

    @property
    def qps(self) -> float:
        return self.inner.qps

    @property
    def burst(self) -> int:
        return self.inner.burst

    def configure(self, qps: float, burst: int) -> None:
        self.inner.configure(qps, burst)

    def acquire(self) -> float:
        waited = self.inner.acquire()
        self._check()
        return waited

    def acquire_idle(self, patience: float = 10.0) -> float:
        waited = self.inner.acquire_idle(patience)
        self._check()
        return waited

    def _check(self) -> None:
        if not self.fence():
            raise TransientApiError(NOT_LEADER, status=0, reason="NotLeader", verb="fence")
