"""The asyncio bound on passes (controller/service/passlimiter.py): at most ``limit`` holders, in arrival
order, waiters released when the limit grows, a shrink honoured as holders leave (never by
cancelling one), observations from worker threads, the fixed mode, the gauge, the Scheduler's wiring."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.adaptive import WARMUP_SAMPLES
from oam_operator.controller.service.metrics import OperatorMetrics
from oam_operator.controller.service.passlimiter import Admission, PassLimiter
from oam_operator.controller.service.scheduler import Scheduler
from oam_operator.controller.service.wakeups import Wakeups
from oam_operator.reconciler.accounting import RequestAccounting, RequestTiming


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), timeout=10))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


class Passes:
    """Tasks that each hold a slot until released by index; records the order of entry."""

    def __init__(self, limiter: PassLimiter) -> None:
        self.limiter = limiter
        self.entered: list[int] = []
        self.over_limit: list[tuple[int, int, int]] = []
        self.gates: dict[int, asyncio.Event] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.admissions: dict[int, Admission] = {}

    def start(self, *indexes: int, key: str = "", routine: bool = False) -> None:
        for index in indexes:
            self.gates[index] = asyncio.Event()
            self.tasks[index] = asyncio.create_task(self._pass(index, key, routine))

    async def _pass(self, index: int, key: str, routine: bool) -> None:
        async with self.limiter.slot(key, routine=routine) as admission:
            if self.limiter.holders > self.limiter.limit:
                self.over_limit.append((index, self.limiter.holders, self.limiter.limit))
            self.entered.append(index)
            self.admissions[index] = admission
            await self.gates[index].wait()

    async def finish(self, *indexes: int) -> None:
        for index in indexes:
            self.gates[index].set()
            await self.tasks[index]
        await settle()


def fed(limiter: PassLimiter) -> None:
    """Give the ``get`` verb its baseline, so passes judge the pressure (1.0: as usual)."""
    for _ in range(WARMUP_SAMPLES):
        limiter.observe_request(RequestTiming("get", "GET", 200, 0.01))


def test_at_most_limit_holders_in_arrival_order() -> None:
    async def test() -> None:
        limiter = PassLimiter(10, clock=Clock())
        passes = Passes(limiter)
        passes.start(*range(7))
        await settle()
        assert (limiter.limit, limiter.holders, limiter.waiting) == (4, 4, 3)
        assert passes.entered == [0, 1, 2, 3]
        await passes.finish(2)
        assert passes.entered == [0, 1, 2, 3, 4] and limiter.holders == 4
        await passes.finish(0, 1, 3, 4, 5, 6)
        assert passes.entered == list(range(7)) and (limiter.holders, limiter.waiting) == (0, 0)
        assert passes.over_limit == []

    run(test)


def test_waiters_are_released_when_the_limit_grows() -> None:
    async def test() -> None:
        limiter = PassLimiter(10, clock=Clock())
        fed(limiter)
        passes = Passes(limiter)
        passes.start(*range(6))
        await settle()
        assert limiter.state is not None
        limiter.state.value = 4.9
        await passes.finish(0)  # a saturated pass ends fast: 4.9 + 1/4.9 → 5 slots, 3 held
        assert limiter.limit == 5
        assert passes.entered == [0, 1, 2, 3, 4, 5] and (limiter.holders, limiter.waiting) == (5, 0)
        assert passes.over_limit == []
        await passes.finish(1, 2, 3, 4, 5)

    run(test)


def test_a_shrink_is_honoured_as_holders_leave() -> None:
    async def test() -> None:
        limiter = PassLimiter(10, clock=Clock())
        fed(limiter)
        passes = Passes(limiter)
        passes.start(*range(7))
        await settle()
        # A throttled request on a worker thread halves the limit; nothing running is cancelled.
        worker = threading.Thread(target=limiter.observe_request,
                                  args=(RequestTiming("apply", "PATCH", 429, 0.01, 1.0),))
        worker.start()
        worker.join()
        assert (limiter.limit, limiter.holders, limiter.waiting) == (2, 4, 3)
        assert not any(task.done() for task in passes.tasks.values())
        await passes.finish(0)
        await passes.finish(1)
        assert (limiter.holders, limiter.waiting, passes.entered) == (2, 3, [0, 1, 2, 3])
        await passes.finish(2)
        assert (limiter.holders, limiter.waiting, passes.entered) == (2, 2, [0, 1, 2, 3, 4])
        await passes.finish(3, 4, 5, 6)
        assert passes.over_limit == [] and limiter.holders == 0

    run(test)


def test_a_cancelled_waiter_leaves_no_slot_behind() -> None:
    async def test() -> None:
        limiter = PassLimiter(2, clock=Clock())
        passes = Passes(limiter)
        passes.start(0, 1, 2, 3)
        await settle()
        passes.tasks[2].cancel()
        await settle()
        assert (limiter.holders, limiter.waiting) == (2, 1)
        await passes.finish(0)
        assert passes.entered == [0, 1, 3]
        await passes.finish(1, 3)
        assert (limiter.holders, limiter.waiting) == (0, 0)

    run(test)


def test_a_waiter_cancelled_after_its_grant_hands_the_slot_on() -> None:
    async def test() -> None:
        limiter = PassLimiter(1, clock=Clock())
        await limiter.acquire()
        granted, after = asyncio.create_task(limiter.acquire()), asyncio.create_task(limiter.acquire())
        await settle()
        assert limiter.waiting == 2
        limiter.release()  # grants the first waiter ...
        granted.cancel()  # ... which is cancelled before it resumes
        await settle()
        assert granted.cancelled() and after.done() and (limiter.holders, limiter.waiting) == (1, 0)
        assert limiter.urgent_holders == 1  # the cancelled grant gave its count back too
        limiter.release()
        assert (limiter.holders, limiter.urgent_holders) == (0, 0)

    run(test)


def test_without_adaptation_the_limit_is_the_cap() -> None:
    async def test() -> None:
        reported: list[int] = []
        limiter = PassLimiter(3, adaptive=False, clock=Clock(), on_change=reported.append)
        assert limiter.state is None
        limiter.observe_request(RequestTiming("get", "GET", 429, 0.01, 1.0))
        passes = Passes(limiter)
        passes.start(*range(5))
        await settle()
        assert (limiter.limit, limiter.holders, limiter.waiting) == (3, 3, 2)
        await passes.finish(*range(5))
        assert reported == [3]

    run(test)


def test_the_gauge_sees_every_change_of_the_whole_limit() -> None:
    async def test() -> None:
        reported: list[int] = []
        clock = Clock()
        limiter = PassLimiter(10, clock=clock, on_change=reported.append)
        fed(limiter)
        passes = Passes(limiter)
        passes.start(*range(12))
        await settle()
        for index in range(5):  # five saturated passes: 4 → 5
            await passes.finish(index)
        limiter.observe_request(RequestTiming("get", "GET", 429, 0.01))  # 5.1 → 2.6
        clock.now += 1.0
        limiter.observe_request(RequestTiming("get", "GET", 429, 0.01))  # 2.6 → 1.3
        assert reported == [4, 5, 2, 1]
        await passes.finish(*range(5, 12))

    run(test)


def test_namespaces_take_turns_and_a_late_one_overtakes_the_backlog() -> None:
    async def test() -> None:
        limiter = PassLimiter(2, adaptive=False, clock=Clock())
        passes = Passes(limiter)
        passes.start(*range(0, 20), key="flood")  # 0, 1 hold the slots; 18 wait
        await settle()
        passes.start(100, key="healthy")
        passes.start(200, 201, key="other")
        await settle()
        assert (limiter.queued, limiter.waiting, limiter.waiting_keys, limiter.deepest) == (21, 21, 3, 18)
        await passes.finish(0)
        await passes.finish(1)
        await passes.finish(2)
        await passes.finish(100)
        await passes.finish(200)
        assert passes.entered == [0, 1, 2, 100, 200, 3, 201]
        healthy = passes.admissions[100]
        assert (healthy.key, healthy.number, healthy.arrived_after, healthy.waiting_ahead) == ("healthy", 4, 2, 18)
        assert healthy.overtaken_by == 1  # the flood's turn, which had come before it arrived
        assert passes.admissions[201].overtaken_by == 4
        await passes.finish(*range(3, 20), 201)
        assert passes.entered[7:] == list(range(4, 20))
        assert (limiter.holders, limiter.queued, limiter.waiting_keys, limiter.deepest) == (0, 0, 0, 0)
        assert passes.over_limit == []

    run(test)


def test_routine_passes_wait_behind_every_other_pass_and_take_turns_among_themselves() -> None:
    async def test() -> None:
        limiter = PassLimiter(1, adaptive=False, clock=Clock())
        passes = Passes(limiter)
        passes.start(0, key="fleet", routine=True)  # a free slot: taken at once, routine or not
        await settle()
        passes.start(1, 2, key="fleet", routine=True)
        passes.start(3, key="quiet", routine=True)
        await settle()
        passes.start(10, key="fleet")  # a changed Application, arriving after the routine ones
        passes.start(11, key="new")
        await settle()
        assert (limiter.queued, limiter.waiting, limiter.waiting_routine, limiter.waiting_keys) == (5, 5, 3, 3)
        await passes.finish(0)
        await passes.finish(10)
        await passes.finish(11)
        await passes.finish(1)
        await passes.finish(3)
        assert passes.entered == [0, 10, 11, 1, 3, 2]  # the routine queue keeps its namespaces' turns
        passes.start(4, key="fleet", routine=True)  # one waits already: a routine pass queues behind it
        await settle()
        assert passes.entered == [0, 10, 11, 1, 3, 2] and limiter.waiting_routine == 1
        await passes.finish(2)
        await passes.finish(4)
        assert passes.entered == [0, 10, 11, 1, 3, 2, 4]
        assert (limiter.holders, limiter.queued, limiter.waiting_routine) == (0, 0, 0)

    run(test)


def test_routine_passes_wait_while_another_pass_runs_even_with_slots_free() -> None:
    """A fleet's confirmations do not share the cores with a new or changed Application's pass:
    free slots go to routine passes only once no other pass holds one."""
    async def test() -> None:
        limiter = PassLimiter(4, adaptive=False, clock=Clock())
        passes = Passes(limiter)
        passes.start(0, key="fleet", routine=True)  # nothing else runs: taken at once
        await settle()
        passes.start(10, key="changed")  # a free slot: taken at once, beside the routine one
        await settle()
        assert passes.entered == [0, 10] and limiter.urgent_holders == 1
        passes.start(1, 2, key="fleet", routine=True)
        await settle()
        assert passes.entered == [0, 10] and (limiter.holders, limiter.waiting_routine) == (2, 2)
        passes.start(11, key="new")  # not routine: goes ahead into a free slot
        await settle()
        assert passes.entered == [0, 10, 11] and limiter.urgent_holders == 2
        await passes.finish(10)
        assert passes.entered == [0, 10, 11]  # one such pass still runs
        await passes.finish(11)
        assert passes.entered == [0, 10, 11, 1, 2] and (limiter.holders, limiter.urgent_holders) == (3, 0)
        passes.start(3, key="quiet", routine=True)  # none but routine ones run: a free slot at once
        await settle()
        assert passes.entered == [0, 10, 11, 1, 2, 3]
        await passes.finish(0, 1, 2, 3)
        assert (limiter.holders, limiter.urgent_holders, limiter.queued) == (0, 0, 0)

    run(test)


def test_a_cancelled_routine_waiter_leaves_its_queue() -> None:
    async def test() -> None:
        limiter = PassLimiter(1, adaptive=False, clock=Clock())
        passes = Passes(limiter)
        passes.start(0)
        passes.start(1, routine=True)
        await settle()
        passes.tasks[1].cancel()
        await settle()
        assert (limiter.queued, limiter.waiting_routine) == (0, 0)
        await passes.finish(0)
        assert limiter.holders == 0

    run(test)


def test_an_admission_counts_grants_and_what_waited() -> None:
    async def test() -> None:
        clock = Clock()
        limiter = PassLimiter(1, adaptive=False, clock=clock)
        first = await limiter.acquire("a")
        assert first == Admission("a", 1, 0, 0, 0.0)
        later = asyncio.create_task(limiter.acquire("b"))
        await settle()
        clock.now += 2.5
        limiter.release()
        second = await later
        assert second == Admission("b", 2, 1, 0, 2.5) and second.overtaken_by == 0
        assert second.log_fields() == {"admission": 2, "waiting_ahead": 0, "overtaken_by": 0, "queued_seconds": 2.5}
        limiter.release()

    run(test)


def test_a_cancelled_waiter_does_not_use_its_namespaces_turn() -> None:
    async def test() -> None:
        limiter = PassLimiter(1, adaptive=False, clock=Clock())
        passes = Passes(limiter)
        passes.start(0, key="a")
        await settle()
        passes.start(1, 2, key="b")
        passes.start(3, key="c")
        await settle()
        passes.tasks[1].cancel()
        await settle()
        assert (limiter.queued, limiter.waiting_keys) == (2, 2)
        await passes.finish(0)
        await passes.finish(2)
        await passes.finish(3)
        assert passes.entered == [0, 2, 3] and limiter.holders == 0

    run(test)


def test_release_without_a_slot_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="without a slot"):
        PassLimiter(2).release()


@pytest.mark.parametrize(("flags", "limit", "observed"), [
    ({}, 4, True),
    ({"adaptive_concurrency": "off"}, 10, False),
    ({"max_concurrent_reconciles": "2"}, 2, True),
])
def test_the_scheduler_wires_the_limiter(flags: dict[str, str], limit: int, observed: bool) -> None:
    settings = Settings.from_sources(flags, {})
    metrics = OperatorMetrics(process_collectors=False)
    accounting = RequestAccounting()
    loop = asyncio.new_event_loop()
    scheduler = Scheduler(settings, Wakeups(loop), metrics=metrics, accounting=accounting)
    try:
        assert scheduler.limiter.limit == limit
        assert metrics.registry.get_sample_value("oam_operator_concurrency_limit") == limit
        assert (scheduler.limiter.observe_request in accounting.observers) == observed
        assert metrics.registry.get_sample_value("oam_operator_pass_queue_depth") == 0
    finally:
        scheduler.pool.shutdown()
        loop.close()
