"""Requeue delays (docs/operator.md#backoff-and-timeouts): per-activity backoff, error backoff,
the retry backoff of failed status writes and unanswered reads, and jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

ACTIVITIES = ("Processing", "Retrying", "DeletionProcessing", "DeletionBlocked")


def backoff_delay(attempt: int) -> float:
    """Seconds for the ``attempt``-th consecutive requeue of one activity (1-based)."""
    if attempt <= 5:
        return 0.05 * float(2 ** (attempt - 1))
    if attempt <= 20:
        return 1.0
    if attempt <= 50:
        return 2.0
    return 10.0


@dataclass
class Backoff:
    """Counts consecutive requeues of one activity; switching activity restarts the count."""

    activity: str | None = None
    attempts: int = 0

    def next(self, activity: str) -> float:
        if activity != self.activity:
            self.activity, self.attempts = activity, 0
        self.attempts += 1
        return backoff_delay(self.attempts)

    def reset(self) -> None:
        self.activity, self.attempts = None, 0


@dataclass
class ErrorBackoff:
    """``min(interval, 5 s × 2^(k-1))`` for the k-th consecutive pass ending in one reason."""

    reason: str | None = None
    count: int = 0

    def next(self, reason: str, interval: float) -> float:
        if reason != self.reason:
            self.reason, self.count = reason, 0
        self.count += 1
        return min(interval, 5.0 * float(2 ** min(self.count - 1, 30)))

    def reset(self) -> None:
        self.reason, self.count = None, 0


RETRY_FIRST = 1.0  # seconds: the first retry of a failed status write
RETRY_MAX = 60.0  # seconds: the retry backoff's ceiling


@dataclass
class RetryBackoff:
    """``min(RETRY_MAX, RETRY_FIRST × 2^(k-1))`` for the k-th consecutive failed status write (or
    read of the Application) of one Application; reset by the next write that lands. An API server
    outage thus costs each Application one request per step, not one per pass of a tight loop."""

    count: int = 0

    def next(self) -> float:
        self.count += 1
        return min(RETRY_MAX, RETRY_FIRST * float(2 ** min(self.count - 1, 30)))

    def reset(self) -> None:
        self.count = 0


@dataclass
class Jitter:
    """Adds a uniformly chosen whole 1–5 % to every timed delay > 0."""

    rng: random.Random = field(default_factory=random.Random)

    def __call__(self, delay: float) -> float:
        if delay <= 0:
            return delay
        return delay * (1 + self.rng.randint(1, 5) / 100)
