"""Waiting passes per namespace, served in turn (controller/service/fairqueue.py, docs/operator.md#fair-queues):
the order of service, keys joining and leaving the ring, skipped (cancelled) entries, removal."""

from __future__ import annotations

from oam_operator.controller.service.fairqueue import FairQueue


def drain(queue: FairQueue[str]) -> list[str]:
    served = []
    while (next_one := queue.pop()) is not None:
        served.append(next_one[1])
    return served


def test_one_key_is_first_in_first_out() -> None:
    queue: FairQueue[str] = FairQueue()
    for entry in ("a1", "a2", "a3"):
        queue.push("a", entry)
    assert len(queue) == 3
    assert drain(queue) == ["a1", "a2", "a3"]
    assert len(queue) == 0 and queue.pop() is None


def test_keys_take_turns_one_entry_each() -> None:
    queue: FairQueue[str] = FairQueue()
    for index in range(1, 5):
        queue.push("flood", f"f{index}")
    queue.push("calm", "c1")
    queue.push("other", "o1")
    queue.push("calm", "c2")
    assert drain(queue) == ["f1", "c1", "o1", "f2", "c2", "f3", "f4"]


def test_a_key_that_arrives_behind_a_deep_queue_waits_for_one_entry_of_each_waiting_key() -> None:
    queue: FairQueue[str] = FairQueue()
    for index in range(200):
        queue.push("flood", f"f{index}")
    assert queue.pop() == ("flood", "f0")
    queue.push("healthy", "h")
    assert queue.pop() == ("flood", "f1")  # the flood's turn had come before the healthy key joined
    assert queue.pop() == ("healthy", "h")
    assert queue.keys() == ["flood"] and queue.depth("flood") == 198


def test_a_key_that_empties_leaves_the_ring_and_rejoins_at_the_back() -> None:
    queue: FairQueue[str] = FairQueue()
    queue.push("a", "a1")
    queue.push("b", "b1")
    queue.push("b", "b2")
    assert queue.pop() == ("a", "a1")
    assert queue.keys() == ["b"]
    queue.push("c", "c1")
    queue.push("a", "a2")
    assert queue.keys() == ["b", "c", "a"]
    assert drain(queue) == ["b1", "c1", "a2", "b2"]


def test_skipped_entries_are_dropped_without_using_the_turn() -> None:
    queue: FairQueue[str] = FairQueue()
    for entry in ("a1-cancelled", "a2-cancelled", "a3"):
        queue.push("a", entry)
    queue.push("b", "b1")
    queue.push("b", "b2")
    queue.push("c", "c1-cancelled")
    skip = lambda entry: entry.endswith("-cancelled")  # noqa: E731
    assert queue.pop(skip) == ("a", "a3")  # still a's turn, after its cancelled ones
    assert queue.pop(skip) == ("b", "b1")
    assert queue.pop(skip) == ("b", "b2")  # c had only a cancelled entry: gone from the ring
    assert queue.pop(skip) is None and len(queue) == 0 and queue.keys() == []


def test_remove_takes_one_entry_out() -> None:
    queue: FairQueue[str] = FairQueue()
    queue.push("a", "a1")
    queue.push("a", "a2")
    queue.push("b", "b1")
    assert queue.remove("a", "a1") and not queue.remove("a", "a1") and not queue.remove("z", "a2")
    assert queue.remove("b", "b1")
    assert queue.keys() == ["a"] and len(queue) == 1 and list(queue) == ["a2"]


def test_depths() -> None:
    queue: FairQueue[str] = FairQueue()
    assert queue.deepest() == 0 and queue.depth("a") == 0
    for index in range(3):
        queue.push("a", f"a{index}")
    queue.push("b", "b0")
    assert (queue.deepest(), queue.depth("a"), queue.depth("b"), len(queue)) == (3, 3, 1, 4)
