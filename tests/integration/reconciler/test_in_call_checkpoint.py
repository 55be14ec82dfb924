"""The in-call checkpoint (docs/reconciler.md#in-call-checkpoint): new items are persisted through
the caller's ``checkpoint`` before any object exists, and the same call goes on to create
them without reading them a second time; every scenario runs with batched reads and
GET-only (the ``batch_reads`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DIGEST_KEY, OWNER_KEY, HarnessFactory, Kube, configmap
from test_first_apply import OTHER, foreign, verbs, warm

from oam_operator.reconciler.errors import OwnershipConflictError, TransientApiError
from oam_operator.reconciler.identity import hash_owner_id

N = 12


def _labels(kube: Kube, name: str, namespace: str) -> dict[str, Any]:
    live = kube.get("v1", "ConfigMap", name, namespace)
    assert live is not None
    return dict(live["metadata"].get("labels") or {})


def test_one_call_records_then_creates_and_reads_once(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h = make_harness()
    objects = [configmap(f"c{i:02d}") for i in range(N)]
    absent_at_checkpoint: list[bool] = []

    def window() -> None:
        absent_at_checkpoint.extend(kube.get("v1", "ConfigMap", f"c{i:02d}", namespace) is None for i in range(N))

    warm(h)
    assert h.apply_checkpointed(objects, window) is False
    assert absent_at_checkpoint == [True] * N
    assert [len(c) for c in h.checkpoints] == [N]
    assert {item.phase.value for item in h.checkpoints[0]} == {"ScheduledForApplication"}
    report = h.reconciler.report
    assert (report.outcome, report.checkpointed) == ("waiting", True)
    # Step 8's read (one LIST, or N GETs) serves the creates too; step 12 reads the namespace.
    assert verbs(h) == ({"list": 1, "get": 1, "apply": N} if batch_reads else {"get": N + 1, "apply": N})
    assert set(h.phases().values()) == {"Creating"}
    assert h.apply_checkpointed(objects) is True  # nothing new: no checkpoint
    assert h.checkpoints == []
    assert h.reconciler.report.checkpointed is False
    assert set(h.state().values()) == {("Ready", "Current")}


def test_an_object_created_after_the_checkpoint_is_not_taken_over(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h = make_harness()
    objects = [configmap(n) for n in ("a", "b", "c", "d")]

    def window() -> None:
        kube.create(foreign("b", namespace))
        kube.create(configmap("c", namespace, data={"pre": "unlabelled"}))

    with pytest.raises(TransientApiError) as info:
        h.apply_checkpointed(objects, window)
    key = f"/v1, Kind=ConfigMap {namespace}/b"
    assert info.value.status == 409
    assert str(info.value).startswith(f"error creating object {key}: 409 Conflict: ")
    # b and c were refused by the API server, a and d created.
    assert kube.get("v1", "ConfigMap", "b", namespace)["data"] == {"pre": "foreign"}  # type: ignore[index]
    assert kube.get("v1", "ConfigMap", "c", namespace)["data"] == {"pre": "unlabelled"}  # type: ignore[index]
    assert OWNER_KEY not in _labels(kube, "c", namespace)
    assert _labels(kube, "a", namespace)[OWNER_KEY] == hash_owner_id(h.owner_id)
    assert _labels(kube, "d", namespace)[OWNER_KEY] == hash_owner_id(h.owner_id)
    # The next call reads them and runs the adoption check as usual.
    with pytest.raises(OwnershipConflictError) as conflict:
        h.apply_checkpointed(objects)
    assert str(conflict.value) == f"owner conflict; object {key} is owned by {OTHER}"
    assert _labels(kube, "b", namespace)[OWNER_KEY] == hash_owner_id(OTHER)


def test_a_checkpoint_that_raises_ends_the_call_with_nothing_created(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h = make_harness()
    objects = [configmap(n) for n in ("a", "b")]

    def window() -> None:
        raise RuntimeError("status not written")

    warm(h)
    with pytest.raises(RuntimeError, match=r"^status not written$"):
        h.apply_checkpointed(objects, window)
    assert kube.get("v1", "ConfigMap", "a", namespace) is None
    assert kube.get("v1", "ConfigMap", "b", namespace) is None
    assert verbs(h) == ({"list": 1} if batch_reads else {"get": 2})
    assert h.phases() == {"a": "ScheduledForApplication", "b": "ScheduledForApplication"}
    # The items were recorded, so the next call creates without a checkpoint.
    assert h.apply_checkpointed(objects) is False
    assert h.checkpoints == []
    assert set(h.phases().values()) == {"Creating"}


def test_objects_applied_after_the_last_recorded_checkpoint_are_not_written_again(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    """docs/reconciler.md#applied-before-recorded: an instance killed after creating the objects
    of its checkpoint leaves items without ``lastAppliedAt``; the next one finds each object with
    our owner label and the same digest, and counts it as applied, without a write."""
    h = make_harness()
    objects = [configmap(f"c{i:02d}") for i in range(N)]
    warm(h)
    assert h.apply_checkpointed(objects) is False
    recorded = h.checkpoints[0]  # the last status the killed instance wrote
    assert {(item.phase.value, item.last_applied_at) for item in recorded} == {("ScheduledForApplication", None)}
    h._persist(recorded)
    # One object the killed instance had applied with an older digest, one it never created.
    stale = kube.get("v1", "ConfigMap", "c00", namespace)
    assert stale is not None
    kube.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "c00", "namespace": namespace, "annotations": {DIGEST_KEY: "older"}}})
    kube.delete("v1", "ConfigMap", "c01", namespace)
    h.client.accounting.reset()
    assert h.apply(objects) is False
    counts = verbs(h)
    assert counts.get("apply", 0) + counts.get("create", 0) == 2  # c00 (another digest) and c01 (missing)
    assert {name: phase for name, phase in h.phases().items() if name in ("c00", "c01")} == {
        "c00": "Updating", "c01": "Creating"}
    assert {h.state()[f"c{i:02d}"] for i in range(2, N)} == {("Ready", "Current")}
    assert h.apply(objects) is True
    assert set(h.state().values()) == {("Ready", "Current")}


def test_a_reconcile_request_still_re_applies_ready_objects(
    make_harness: HarnessFactory, batch_reads: bool
) -> None:
    """The same owner label and digest do not spare a Ready item whose ``lastAppliedAt`` was
    cleared on purpose (a reconcile request, drift correction): it is written."""
    h = make_harness()
    objects = [configmap(f"c{i:02d}") for i in range(3)]
    h.apply(objects)  # the checkpoint
    h.apply(objects)  # the creates
    assert h.apply(objects) is True
    inventory = h.inventory
    for item in inventory:
        item.last_applied_at = None
    h._persist(inventory)
    h.client.accounting.reset()
    h.apply(objects)
    assert h.client.accounting.count(verb="apply") == 3
