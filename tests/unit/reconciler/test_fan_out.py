"""run_bounded's calls running at once on one pool share its limit (reconciler/concurrency.py,
docs/reconciler.md#concurrency-and-rate-limiting)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from oam_operator.reconciler.accounting import RequestAccounting
from oam_operator.reconciler.concurrency import fan_out, run_bounded


def test_the_share_is_the_limit_divided_by_the_calls_and_at_least_one() -> None:
    assert [fan_out(8, callers) for callers in (1, 2, 3, 4, 8, 9, 40)] == [8, 4, 2, 2, 1, 1, 1]
    assert fan_out(8, 0) == 8


def test_a_call_alone_fans_out_to_its_limit() -> None:
    accounting = RequestAccounting()

    def task(index: int) -> int:
        accounting.started()
        time.sleep(0.02)
        accounting.finished("get", "GET", 200)
        return index

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = run_bounded(pool, [lambda i=i: task(i) for i in range(16)], 4)  # type: ignore[misc]
    assert [outcome.value for outcome in outcomes] == list(range(16))
    assert accounting.max_in_flight == 4


def test_a_call_begun_while_another_runs_takes_half_of_the_limit() -> None:
    entered = threading.Event()
    release = threading.Event()
    lock = threading.Lock()
    in_flight, most = [0], [0]

    def hold() -> None:
        entered.set()
        release.wait(5)

    def task() -> None:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.02)
        with lock:
            in_flight[0] -= 1

    with ThreadPoolExecutor(max_workers=16) as pool:
        holder = threading.Thread(target=run_bounded, args=(pool, [hold, hold], 4))
        holder.start()
        assert entered.wait(5)
        outcomes = run_bounded(pool, [task] * 12, 4)
        release.set()
        holder.join(5)
    assert [outcome.error for outcome in outcomes] == [None] * 12
    assert most[0] == 2


def test_a_share_of_one_runs_the_tasks_on_the_callers_thread() -> None:
    """With more calls running than the limit, a call runs its tasks itself, one after another."""
    entered = threading.Event()
    release = threading.Event()
    threads: list[int] = []

    def hold() -> None:
        entered.set()
        release.wait(5)

    with ThreadPoolExecutor(max_workers=8) as pool:
        holders = [threading.Thread(target=run_bounded, args=(pool, [hold, hold], 2)) for _ in range(2)]
        for holder in holders:
            holder.start()
        assert entered.wait(5)
        time.sleep(0.05)  # both holders are inside run_bounded
        run_bounded(pool, [lambda: threads.append(threading.get_ident()) for _ in range(3)], 2)
        release.set()
        for holder in holders:
            holder.join(5)
    assert threads == [threading.get_ident()] * 3
