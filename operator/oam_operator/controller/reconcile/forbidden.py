"""A 403 is retried quietly for a few seconds before it is an error
(docs/operator.md#a-403-in-the-first-seconds).

An API server that has just started answers before its RBAC authorizer has synced its cache,
and a RoleBinding created with an Application is honoured a moment after it exists: for a
fraction of a second a request the account may make is refused with 403. Reported at once,
that is an ``Error``/``ApiError`` and a Warning Event on Applications that are fine. So the
first 403 of a run of passes ending in one opens a grace window of ``GRACE``: within it a 403
leaves the status as it was and the pass is retried on the ``Retrying`` backoff (50 ms,
100 ms, …); a 403 still there after it is the error, as before. Any pass that does not end
in a 403 closes the run. A lasting 403 therefore shows ``GRACE`` later, never less visibly.

The status writer keeps a window of its own for the 403s of status writes (the operator's own
identity, refused by the same unsynced authorizer): it ends with a status write that succeeds.
Times are seconds on any clock that does not jump (the pass's, the writer's monotonic one).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GRACE", "ForbiddenGrace"]

GRACE = 5.0  # seconds


@dataclass
class ForbiddenGrace:
    """The run of passes of one Application ending in a 403: when its first 403 was seen."""

    since: float | None = None

    def quiet(self, now: float) -> bool:
        """A 403 seen ``now``: whether it is retried quietly (within ``GRACE`` of the run's first)."""
        if self.since is None or now < self.since:
            self.since = now
        return now - self.since < GRACE

    def reset(self) -> None:
        """A pass ended without a 403: the next 403 opens a new window."""
        self.since = None
