"""The adaptive limit of passes in flight (docs/operator.md#adaptive-concurrency).

Why: a fixed ``--max-concurrent-reconciles`` is either too low for a fast API server or too
high for a loaded one. The server says which it is: a 429 or ``Retry-After`` when its flow
control sheds load, and rising latency when API Priority and Fairness queues requests (or the
server is simply saturated). ``ConcurrencyLimit`` turns those signals into a limit between 1
and the cap, in the manner of TCP congestion control: additive increase while passes that use
the whole limit finish with latency near its baseline, multiplicative decrease on throttling or
on latency well above the baseline, at most one decrease per cooldown.

Pure and single-threaded: the clock is injected and the caller serialises the calls
(``passlimiter.py`` holds a lock, observations arrive from worker threads).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BASELINE_MAX_STEP",
    "BASELINE_SECONDS",
    "GROW_PRESSURE",
    "INITIAL_LIMIT",
    "LATENCY_BACKOFF",
    "MAX_COOLDOWN",
    "MIN_COOLDOWN",
    "PASS_SMOOTHING",
    "PRESSURE_CAP",
    "PRESSURE_SMOOTHING",
    "SHRINK_PRESSURE",
    "THROTTLE_BACKOFF",
    "WARMUP_SAMPLES",
    "ConcurrencyLimit",
]

#: The limit a process starts with (or the cap, if lower): a fleet restart does not open at the cap.
INITIAL_LIMIT: Final = 4
#: Factor of a decrease on a 429 or a ``Retry-After``: the server refused work, halve (TCP's loss response).
THROTTLE_BACKOFF: Final = 0.5
#: Factor of a decrease on latency pressure: an earlier, softer signal than a refusal.
LATENCY_BACKOFF: Final = 0.75
#: Pressure (recent latency over baseline) above which the limit shrinks.
SHRINK_PRESSURE: Final = 2.0
#: Pressure at or below which a saturated limit may grow; in between, it holds.
GROW_PRESSURE: Final = 1.5
#: Weight of one request in the pressure (an average over the last ~10 requests).
PRESSURE_SMOOTHING: Final = 0.1
#: One request counts as at most this many baselines: a single stall does not decide alone.
PRESSURE_CAP: Final = 8.0
#: Requests of a verb averaged plainly into its first baseline before they count in the pressure.
WARMUP_SAMPLES: Final = 8
#: Time constant of a verb's baseline: a latency that lasts about this long becomes the new normal.
BASELINE_SECONDS: Final = 60.0
#: The most one request moves a baseline (after an idle gap a single request must not reset it).
BASELINE_MAX_STEP: Final = 1.0 / WARMUP_SAMPLES
#: Weight of one pass in the smoothed pass duration (the cooldown).
PASS_SMOOTHING: Final = 0.2
#: Bounds of the cooldown after a decrease, which is otherwise the smoothed pass duration.
MIN_COOLDOWN: Final = 1.0
MAX_COOLDOWN: Final = 10.0


@dataclass
class _Baseline:
    """The usual latency of one verb: a plain mean of its first samples, then a time-weighted average."""

    seconds: float
    samples: int
    updated: float

    def add(self, seconds: float, now: float) -> None:
        self.samples += 1
        if self.samples <= WARMUP_SAMPLES:
            weight = 1.0 / self.samples
        else:
            weight = min(max(now - self.updated, 0.0) / BASELINE_SECONDS, BASELINE_MAX_STEP)
        self.seconds += (seconds - self.seconds) * weight
        self.updated = now


class ConcurrencyLimit:
    """How many passes may run at once: between 1 and ``cap``, moved by what the server shows.

    ``request_finished`` takes every request's outcome (a throttled one shrinks the limit at once;
    any other one that got a response feeds the latency pressure); ``pass_finished`` takes every
    pass's end, which is where the limit grows or shrinks on pressure. ``value`` is the exact
    limit (it grows by ``1/value`` per pass, one per round of passes), ``limit`` its whole part.
    """

    def __init__(self, cap: int, *, clock: Callable[[], float] = time.monotonic, initial: int | None = None) -> None:
        if cap < 1:
            raise ValueError("the cap must be at least 1")
        self.cap = cap
        self._clock = clock
        self.value = float(max(1, min(cap, INITIAL_LIMIT if initial is None else initial)))
        #: Recent latency over the baseline of its verb, smoothed over requests; 1.0 = as usual.
        self.pressure = 1.0
        self.baselines: dict[str, _Baseline] = {}
        self.pass_seconds: float | None = None
        self.last_decrease: float | None = None
        #: The reason of the last change (``grow``, ``throttled``, ``latency``), for logs and tests.
        self.last_change = ""

    @property
    def limit(self) -> int:
        return int(self.value)

    @property
    def cooldown(self) -> float:
        """Seconds after a decrease in which the limit neither shrinks nor grows again.

        A decrease takes effect only as passes finish, so for about one pass duration what the
        server shows still comes from passes admitted under the old limit.
        """
        return min(max(self.pass_seconds or 0.0, MIN_COOLDOWN), MAX_COOLDOWN)

    def cooling(self) -> bool:
        return self.last_decrease is not None and self._clock() - self.last_decrease < self.cooldown

    def request_finished(self, verb: str, status: int, seconds: float, retry_after: float | None = None) -> None:
        """One request's outcome; ``status`` 0 (no response) carries no information and is ignored."""
        if status == 429 or (retry_after is not None and not 200 <= status < 300):
            self._decrease(THROTTLE_BACKOFF, "throttled")
            return
        if status <= 0:
            return
        now = self._clock()
        seconds = max(seconds, 1e-6)
        baseline = self.baselines.get(verb)
        if baseline is None:
            self.baselines[verb] = _Baseline(seconds, 1, now)
            return
        if baseline.samples >= WARMUP_SAMPLES:
            ratio = min(seconds / max(baseline.seconds, 1e-6), PRESSURE_CAP)
            self.pressure += (ratio - self.pressure) * PRESSURE_SMOOTHING
        baseline.add(seconds, now)

    def pass_finished(self, seconds: float, *, saturated: bool) -> None:
        """A pass ended after ``seconds``; ``saturated``: the limit was in full use (or passes waited).

        Only a saturated limit grows: one that is not in use has not been tested.
        """
        self.pass_seconds = seconds if self.pass_seconds is None else (
            self.pass_seconds + (seconds - self.pass_seconds) * PASS_SMOOTHING)
        if self.cooling():
            return
        if self.pressure > SHRINK_PRESSURE:
            self._decrease(LATENCY_BACKOFF, "latency")
        elif saturated and self.pressure <= GROW_PRESSURE and self.value < self.cap:
            self.value = min(float(self.cap), self.value + 1.0 / self.value)
            self.last_change = "grow"

    def _decrease(self, factor: float, reason: str) -> None:
        if self.cooling():
            return
        self.value = max(1.0, self.value * factor)
        self.last_decrease = self._clock()
        self.last_change = reason
