"""collector.py: what the process built before kopf starts is frozen out of the collector's
reach, and the youngest generation is collected far less often than Python's 700."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from oam_operator.controller.service.collector import YOUNG_THRESHOLD, tune_collector


@pytest.fixture
def restored() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_the_objects_built_so_far_are_frozen_and_the_young_threshold_raised(restored: None) -> None:
    kept = [{"built": index} for index in range(1000)]
    gc.unfreeze()
    tune_collector()
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD == 50_000
    assert gc.get_freeze_count() >= len(kept)
    assert not any(obj is kept for obj in gc.get_objects())  # frozen: no generation holds it


def test_a_cycle_made_afterwards_is_still_collected(restored: None) -> None:
    tune_collector()

    class Node:
        pass

    node = Node()
    node.self = node  # type: ignore[attr-defined]
    alive = weakref.ref(node)
    del node
    assert alive() is not None  # reference counting cannot free a cycle
    gc.collect()
    assert alive() is None
