"""100 Applications in a dependency tree: all reach Ready, and the index wakes only dependants.

The tree is ternary (Application i depends on (i-1)//3), created leaves first, so almost every
Application starts Waiting. A Waiting Application has no timed requeue (the grace of a missing
dependency, docs/app-dependencies.md#a-missing-application, is set beyond the test): every pass it runs while
waiting is caused by a change of its dependency (it appearing, or becoming Ready) or is its own
first gate check. The test counts those passes from the operator's pass log and the wake-ups
from ``oam_operator_dependency_wakeups_total``; then a new revision of the root must wake exactly
its three direct dependants, twice each.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from e2ekit import Kube, configmap_component, sleep_briefly

from tools.devcluster.pytest_plugin import default_wait, wait_until

COUNT = 100


def name(i: int) -> str:
    return f"app-{i:03d}"


def parent(i: int) -> int | None:
    return None if i == 0 else (i - 1) // 3


def test_a_tree_of_100_applications_is_woken_only_by_dependency_changes(start_operator: Any, kube: Kube) -> None:
    # The grace after which a missing dependency is a Warning (and its one timed requeue) must not
    # end while the tree is still being created on a slow machine: every pass counted below is a wake-up.
    operator = start_operator(kube.namespace, "--missing-dependency-grace", "1h")
    for i in reversed(range(COUNT)):
        up = parent(i)
        policies = [] if up is None else [
            {"name": "after", "type": "app-dependency", "properties": {"applications": [{"name": name(up)}]}}]
        kube.apply_app(name(i), {"components": [configmap_component(f"{name(i)}-config")], "policies": policies})

    def all_ready() -> bool:
        items = kube.custom.list_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace,
                                                          "applications")["items"]
        return len(items) == COUNT and all(
            (item.get("status") or {}).get("state") == "Ready"
            and item["status"].get("observedGeneration") == item["metadata"]["generation"] for item in items)

    wait_until(all_ready, default_wait(kube.cluster) * 3, "100 Applications to be Ready", step=1.0)

    # Order: every Application's object was created no earlier than its dependency became Ready.
    ready_at = {}
    for i in range(COUNT):
        app = kube.app(name(i))
        ready = next(c for c in app["status"]["conditions"] if c["type"] == "Ready")
        ready_at[i] = ready["lastTransitionTime"]
    for i in range(1, COUNT):
        created = kube.core.read_namespaced_config_map(f"{name(i)}-config", kube.namespace).metadata
        up = parent(i)
        assert up is not None
        from datetime import datetime

        became = datetime.fromisoformat(ready_at[up].replace("Z", "+00:00")).replace(microsecond=0)
        assert created.creation_timestamp >= became, name(i)

    passes = [entry for entry in operator.logs()
              if entry.get("msg") == "pass finished" and entry.get("namespace") == kube.namespace]
    waiting = Counter(entry["name"] for entry in passes if entry.get("state") == "Waiting")
    # Each dependant's one dependency changes at most twice (it appears, it becomes Ready); the first
    # gate check adds one: at most 1 + 2 passes while waiting, never a poll.
    worst = max(waiting.values(), default=0)
    assert worst <= 3, waiting.most_common(5)
    wakeups = operator.metrics()[("oam_operator_dependency_wakeups_total", frozenset())]
    # Only dependants are woken: at most twice per edge (appearance and readiness), 99 edges.
    assert 0 < wakeups <= 2 * (COUNT - 1), wakeups
    per_app = Counter(entry["name"] for entry in passes if entry.get("branch") == "apply")
    assert len(per_app) == COUNT

    # A new revision of the root flips its readiness twice (not Ready at its new generation, then
    # Ready): exactly its three direct dependants are woken, twice each; no one else.
    root = kube.app(name(0))
    kube.apply_app(name(0), {"components": [configmap_component(f"{name(0)}-config", {"key": "v2"})],
                             "policies": []})
    wait_until(lambda: (app := kube.ready(name(0))) is not None
               and app["metadata"]["generation"] > root["metadata"]["generation"],
               default_wait(kube.cluster), "the root's new revision to be Ready")

    def woken() -> float:
        return operator.metrics()[("oam_operator_dependency_wakeups_total", frozenset())] - wakeups

    wait_until(lambda: woken() >= 6, default_wait(kube.cluster), "the root's dependants to be woken")
    sleep_briefly(2)
    assert woken() == 6
