"""The adaptive limit of passes in flight (controller/service/adaptive.py, docs/operator.md#adaptive-concurrency),
on a fake clock: growth while fast, one halving per cooldown on 429, shrinking on a latency rise,
the bounds, recovery, and how the baseline follows a lasting change."""

from __future__ import annotations

import pytest

from oam_operator.controller.service.adaptive import (
    BASELINE_SECONDS,
    GROW_PRESSURE,
    INITIAL_LIMIT,
    LATENCY_BACKOFF,
    MIN_COOLDOWN,
    PRESSURE_CAP,
    PRESSURE_SMOOTHING,
    SHRINK_PRESSURE,
    THROTTLE_BACKOFF,
    WARMUP_SAMPLES,
    ConcurrencyLimit,
)

FAST = 0.010  # the usual latency of a request in these tests


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def warm(limit: ConcurrencyLimit, verb: str = "get", seconds: float = FAST) -> None:
    """Give ``verb`` its baseline: the warm-up samples, all equal (the pressure stays 1.0)."""
    for _ in range(WARMUP_SAMPLES):
        limit.request_finished(verb, 200, seconds)


def limiter(cap: int = 10, value: float | None = None) -> tuple[ConcurrencyLimit, Clock]:
    clock = Clock()
    limit = ConcurrencyLimit(cap, clock=clock)
    if value is not None:
        limit.value = value
    warm(limit)
    return limit, clock


def test_the_constants_are_the_documented_ones() -> None:
    assert (INITIAL_LIMIT, THROTTLE_BACKOFF, LATENCY_BACKOFF) == (4, 0.5, 0.75)
    assert (GROW_PRESSURE, SHRINK_PRESSURE, PRESSURE_SMOOTHING, PRESSURE_CAP) == (1.5, 2.0, 0.1, 8.0)
    assert (WARMUP_SAMPLES, BASELINE_SECONDS, MIN_COOLDOWN) == (8, 60.0, 1.0)


@pytest.mark.parametrize(("cap", "initial", "limit"), [
    (1, None, 1), (3, None, 3), (4, None, 4), (10, None, 4), (500, None, 4),
    (10, 7, 7), (10, 20, 10), (10, 0, 1),
])
def test_it_starts_modestly_within_the_cap(cap: int, initial: int | None, limit: int) -> None:
    assert ConcurrencyLimit(cap, clock=Clock(), initial=initial).limit == limit


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ConcurrencyLimit(0)


def test_it_grows_by_one_per_round_of_saturated_passes_up_to_the_cap() -> None:
    limit, _ = limiter(cap=7)
    seen = []
    for _ in range(20):
        limit.pass_finished(0.5, saturated=True)
        seen.append(limit.limit)
    # 4 passes of +1/4 (and a little less each) do not quite make 5; then one per ~limit passes.
    assert seen == [4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7]
    assert limit.value == 7.0 and limit.last_change == "grow"


def test_an_unsaturated_limit_does_not_grow() -> None:
    limit, _ = limiter()
    for _ in range(50):
        limit.pass_finished(0.5, saturated=False)
    assert limit.value == 4.0


@pytest.mark.parametrize(("status", "retry_after", "shrinks"), [
    (429, None, True),
    (429, 1.0, True),
    (503, 2.0, True),    # a Retry-After on any failure is the server asking for less
    (503, None, False),  # an outage without one is not a throttle (its latency counts)
    (200, 1.0, False),
    (404, None, False),
    (0, None, False),    # no response: nothing learnt
])
def test_what_counts_as_throttling(status: int, retry_after: float | None, shrinks: bool) -> None:
    limit, _ = limiter(value=8.0)
    limit.request_finished("get", status, FAST, retry_after)
    assert limit.value == (4.0 if shrinks else 8.0)
    assert limit.last_change == ("throttled" if shrinks else "")


def test_a_burst_of_429s_halves_once_per_cooldown() -> None:
    limit, clock = limiter(value=8.0)
    for _ in range(10):
        limit.request_finished("apply", 429, FAST, 1.0)
        clock.advance(0.0625)
    assert limit.value == 4.0  # ten 429s in 0.625 s: one halving
    clock.advance(MIN_COOLDOWN - 0.625)  # one second after the first
    limit.request_finished("apply", 429, FAST, 1.0)
    assert limit.value == 2.0


def test_no_growth_during_the_cooldown() -> None:
    limit, clock = limiter(value=8.0)
    limit.request_finished("get", 429, FAST)
    for _ in range(10):
        limit.pass_finished(0.2, saturated=True)
    assert limit.value == 4.0
    clock.advance(1.0)
    limit.pass_finished(0.2, saturated=True)
    assert limit.value == 4.25


@pytest.mark.parametrize(("pass_seconds", "cooldown"), [
    (None, 1.0), (0.2, 1.0), (1.0, 1.0), (3.0, 3.0), (10.0, 10.0), (45.0, 10.0),
])
def test_the_cooldown_is_a_pass_duration_within_bounds(pass_seconds: float | None, cooldown: float) -> None:
    limit = ConcurrencyLimit(10, clock=Clock())
    limit.pass_seconds = pass_seconds
    assert limit.cooldown == cooldown


def test_the_pass_duration_is_smoothed() -> None:
    limit, clock = limiter()
    limit.pass_finished(2.0, saturated=False)
    assert limit.pass_seconds == 2.0
    limit.pass_finished(7.0, saturated=False)
    assert limit.pass_seconds == 3.0  # 2 + (7 - 2) × 0.2
    limit.request_finished("get", 429, FAST)
    clock.advance(2.9)
    limit.request_finished("get", 429, FAST)
    assert limit.value == 2.0  # 3 s cooldown: still one halving
    clock.advance(0.1)
    limit.request_finished("get", 429, FAST)
    assert limit.value == 1.0


def test_the_pressure_is_recent_latency_over_the_baseline() -> None:
    limit, _ = limiter(value=8.0)
    assert limit.pressure == 1.0
    pressures = []
    for _ in range(4):
        limit.request_finished("get", 200, 4 * FAST)  # four times the usual
        pressures.append(round(limit.pressure, 4))
    assert pressures == [1.3, 1.57, 1.813, 2.0317]


def test_latency_well_above_the_baseline_shrinks_at_the_end_of_a_pass() -> None:
    limit, _ = limiter(value=8.0)
    for _ in range(3):
        limit.request_finished("get", 200, 4 * FAST)
    limit.pass_finished(0.5, saturated=True)
    assert (limit.value, limit.last_change) == (8.0, "")  # 1.81: above growing, below shrinking: holds
    limit.request_finished("get", 200, 4 * FAST)
    assert limit.value == 8.0  # requests alone never shrink on latency
    limit.pass_finished(0.5, saturated=False)  # saturated or not
    assert (limit.value, limit.last_change) == (6.0, "latency")


def test_latency_is_judged_per_verb() -> None:
    limit, _ = limiter(value=8.0)
    warm(limit, "list", 20 * FAST)  # lists are slower than gets, as usual
    for _ in range(20):
        limit.request_finished("list", 200, 20 * FAST)
        limit.request_finished("get", 200, FAST)
    assert limit.pressure == 1.0
    limit.pass_finished(0.5, saturated=True)
    assert limit.value == 8.125


def test_the_first_samples_of_a_verb_only_form_its_baseline() -> None:
    limit = ConcurrencyLimit(10, clock=Clock())
    for seconds in (0.010, 0.030, 0.020, 0.060, 0.010, 0.030, 0.020, 0.060):
        limit.request_finished("create", 201, seconds)
    assert limit.pressure == 1.0
    assert limit.baselines["create"].seconds == pytest.approx(0.030)
    limit.request_finished("create", 201, 0.060)
    assert limit.pressure == pytest.approx(1.1)  # 1 + (2 - 1) × 0.1


def test_one_stall_counts_as_at_most_eight_baselines() -> None:
    limit, _ = limiter()
    limit.request_finished("get", 200, 1000 * FAST)
    assert limit.pressure == pytest.approx(1.7)  # 1 + (8 - 1) × 0.1


@pytest.mark.parametrize(("throttles", "values"), [
    (1, [2.0]),
    (3, [2.0, 1.0, 1.0]),  # never below one
])
def test_it_never_goes_below_one(throttles: int, values: list[float]) -> None:
    limit, clock = limiter()
    seen = []
    for _ in range(throttles):
        limit.request_finished("get", 429, FAST)
        seen.append(limit.value)
        clock.advance(MIN_COOLDOWN)
    assert seen == values
    for _ in range(3):
        for _ in range(4):
            limit.request_finished("get", 200, 8 * FAST)
        limit.pass_finished(0.1, saturated=True)
        clock.advance(MIN_COOLDOWN)
    assert limit.value == 1.0 and limit.limit == 1


def test_it_never_exceeds_the_cap() -> None:
    limit, _ = limiter(cap=5)
    for _ in range(100):
        limit.pass_finished(0.1, saturated=True)
    assert limit.value == 5.0


def test_it_recovers_once_the_server_is_fast_again() -> None:
    limit, clock = limiter(value=8.0)
    for _ in range(10):
        limit.request_finished("get", 200, 5 * FAST)
    limit.pass_finished(0.5, saturated=True)
    assert limit.value == 6.0
    clock.advance(MIN_COOLDOWN)
    limit.pass_finished(0.5, saturated=True)
    assert limit.value == 4.5  # still slow after the cooldown: more evidence, another cut
    clock.advance(MIN_COOLDOWN)
    for _ in range(30):
        limit.request_finished("get", 200, FAST)
    assert limit.pressure < GROW_PRESSURE
    for _ in range(12):
        limit.pass_finished(0.5, saturated=True)
    assert limit.limit == 6 and limit.last_change == "grow"


def test_a_lasting_latency_becomes_the_new_baseline() -> None:
    limit, clock = limiter()
    for _ in range(180):  # three minutes of one request a second at twice the old latency
        clock.advance(1.0)
        limit.request_finished("get", 200, 2 * FAST)
    expected = 2 * FAST - FAST * (1 - 1 / BASELINE_SECONDS) ** 180
    assert limit.baselines["get"].seconds == pytest.approx(expected)
    assert limit.pressure < 1.1
    limit.pass_finished(0.5, saturated=True)
    assert limit.last_change == "grow"


def test_after_an_idle_gap_one_request_moves_the_baseline_by_an_eighth() -> None:
    limit, clock = limiter()
    clock.advance(600)
    limit.request_finished("get", 200, 9 * FAST)
    assert limit.baselines["get"].seconds == pytest.approx(2 * FAST)  # 10 ms + 80 ms / 8
