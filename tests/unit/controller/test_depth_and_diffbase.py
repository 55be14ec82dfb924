"""Deep nesting is measured without recursion and refused exactly; kopf's diff base holds no spec."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import kopf

from oam_operator.controller.reconcile.depth import (
    MAX_SPEC_DEPTH,
    RECURSION_LIMIT,
    THREAD_STACK_BYTES,
    depth_refusal,
    nesting_depth,
    prepare_process,
)
from oam_operator.controller.service.diffbase import StatelessDiffBaseStorage


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_nesting_depth_counts_containers_iteratively() -> None:
    assert nesting_depth(1) == 0
    assert nesting_depth({}) == 1
    assert nesting_depth([[], {"a": [1]}]) == 3
    assert nesting_depth(nested(50_000)) == 50_000  # far past the default recursion limit
    assert nesting_depth(nested(50_000), stop_after=10) == 11


def test_a_spec_at_the_limit_passes_and_one_level_more_is_refused() -> None:
    # spec (1) → components (2) → component (3) → properties (4) → …
    ok = {"components": [{"name": "c", "properties": nested(MAX_SPEC_DEPTH - 3)}]}
    assert nesting_depth(ok) == MAX_SPEC_DEPTH
    assert depth_refusal(ok) is None
    deep = {"components": [{"name": "ok", "properties": {}},
                           {"name": "c", "properties": nested(MAX_SPEC_DEPTH - 2)}]}
    assert depth_refusal(deep) == (
        "spec.components[1] nests more than 100 levels below spec; an Application may nest at most 100")
    assert depth_refusal({"interval": "1m", "extra": nested(10_000)}) == (
        "spec.extra nests more than 100 levels below spec; an Application may nest at most 100")


def test_prepare_process_gives_threads_room_for_the_api_servers_deepest_object() -> None:
    before_limit, before_stack = sys.getrecursionlimit(), threading.stack_size()
    try:
        prepare_process()
        assert sys.getrecursionlimit() >= RECURSION_LIMIT
        assert threading.stack_size() == THREAD_STACK_BYTES
        text = '{"a":' * 10_000 + "1" + "}" * 10_000  # Go's encoding/json decodes at most 10,000 levels
        results: list[int] = []

        def decode() -> None:
            results.append(nesting_depth(json.loads(text)))

        worker = threading.Thread(target=decode)
        worker.start()
        worker.join()
        assert results == [10_000]
    finally:
        sys.setrecursionlimit(before_limit)
        threading.stack_size(before_stack)


def body(generation: int, annotations: dict[str, str] | None = None, spec: Any = None) -> kopf.Body:
    return kopf.Body({"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                      "metadata": {"name": "a", "generation": generation, "annotations": annotations or {}},
                      "spec": spec if spec is not None else {"components": []}})


def test_the_diff_base_is_the_current_generation_and_is_never_written() -> None:
    storage = StatelessDiffBaseStorage()
    big = body(3, spec={"components": [{"name": "c", "properties": {"blob": "x" * 300_000}}]})
    essence = storage.build(body=big)
    assert essence == {"generation": 3}
    patch = kopf.Patch()
    storage.store(body=big, patch=patch, essence=essence)
    assert dict(patch) == {}  # no annotation, so no write for it
    # every object reads as handled in its current state: kopf sees neither a creation nor an
    # update cause, whatever an earlier version left in the annotation
    assert storage.fetch(body=body(3)) == {"generation": 3}
    old = json.dumps({"spec": {"components": []}})
    assert storage.fetch(body=body(4, {"oam-operator.dev/last-handled-configuration": old})) == {"generation": 4}
