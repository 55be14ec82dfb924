"""Background work stepping aside for urgent passes (controller/service/urgency.py,
docs/operator.md#a-quiet-restart): a yielder waits while one runs, returns once none does, and
never waits more than its budget in all; a pacer does the same on the event loop."""

from __future__ import annotations

import asyncio
import threading
import time

from oam_operator.controller.service.urgency import LIST_YIELD_BUDGET, Pacer, Urgency, Yielder


def test_with_no_urgent_pass_a_yielder_returns_at_once_and_spends_nothing() -> None:
    urgency = Urgency()
    pause = urgency.yielder()
    pause()
    assert (urgency.running, pause.waited) == (0, 0.0)


def test_a_yielder_waits_until_the_last_urgent_pass_ended() -> None:
    urgency = Urgency()
    urgency.started()
    urgency.started()
    returned = threading.Event()
    pause = urgency.yielder()
    worker = threading.Thread(target=lambda: (pause(), returned.set()))
    worker.start()
    urgency.ended()
    assert not returned.wait(0.2)  # one urgent pass still runs
    urgency.ended()
    assert returned.wait(5)
    worker.join()
    assert urgency.running == 0
    assert 0.2 <= pause.waited < LIST_YIELD_BUDGET


def test_the_budget_bounds_the_waiting_of_all_calls_together() -> None:
    urgency = Urgency()
    urgency.started()  # and never ends
    pause = Yielder(urgency, 0.3)
    started = time.monotonic()
    for _ in range(5):
        pause()
    spent = time.monotonic() - started
    assert 0.3 <= spent < 1.0
    assert 0.3 <= pause.waited < 1.0


def test_each_yielder_has_its_own_budget() -> None:
    urgency = Urgency()
    urgency.started()
    first = Yielder(urgency, 0.1)
    first()
    first()
    second = urgency.yielder(0.1)
    started = time.monotonic()
    second()
    assert time.monotonic() - started >= 0.1


def test_an_unmatched_end_never_counts_below_zero() -> None:
    urgency = Urgency()
    urgency.ended()
    urgency.started()
    assert urgency.running == 1
    urgency.ended()
    assert urgency.running == 0 and urgency.wait_quiet(0)


def test_a_pacer_sleeps_on_the_loop_until_the_urgent_pass_ended_and_lets_the_loop_run_meanwhile() -> None:
    urgency = Urgency()
    urgency.started()
    ticks: list[int] = []

    async def scenario() -> float:
        async def ticking() -> None:
            for tick in range(3):
                ticks.append(tick)
                await asyncio.sleep(0.02)
            urgency.ended()

        pause = urgency.pacer()
        ticker = asyncio.ensure_future(ticking())
        await pause()
        await ticker
        return pause.waited

    waited = asyncio.run(scenario())
    assert ticks == [0, 1, 2]  # the loop ran while the pacer waited
    assert 0.04 <= waited < 1.0 and urgency.running == 0


def test_a_pacers_budget_bounds_its_waiting() -> None:
    urgency = Urgency()
    urgency.started()  # and never ends
    pause = Pacer(urgency, 0.1)

    async def scenario() -> None:
        for _ in range(4):
            await pause()

    started = time.monotonic()
    asyncio.run(scenario())
    assert 0.1 <= time.monotonic() - started < 0.6
    assert 0.1 <= pause.waited < 0.6
