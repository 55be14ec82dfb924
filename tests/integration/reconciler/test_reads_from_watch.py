"""Reads answered by the caller's watch (docs/reconciler.md#reads-from-a-watch): a first apply
and a no-op call make no read, an object the watch never saw but that exists is found by its
refused create and goes through the adoption check, a copy out of sync is read live before it
is written, and a Namespace is always read. The watch here is the caller's side of the seam: it
holds what the reconciler wrote (``on_written``), as the operator's watch does once synced; the
API server is the real one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import OWNER_KEY, HarnessFactory, Kube, configmap
from test_first_apply import OTHER, foreign, verbs, warm

from oam_operator.reconciler.cachedreads import ABSENT, UNKNOWN, CachedAnswer
from oam_operator.reconciler.errors import OwnershipConflictError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.objectpolicies import AdoptionPolicy, MissingNamespacesPolicy
from oam_operator.reconciler.objects import ObjectRef

N = 6


class Watch:
    """Copies of what the reconciler wrote; every other object of a watched kind is absent."""

    def __init__(self, kinds: tuple[str, ...] = ("ConfigMap", "Namespace")) -> None:
        self.kinds = kinds
        self.copies: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.asked: list[str] = []

    def written(self, obj: Any) -> None:
        meta = obj["metadata"]
        self.copies[(obj["kind"], meta.get("namespace", ""), meta["name"])] = copy.deepcopy(dict(obj))

    def lookup(self, ref: ObjectRef) -> CachedAnswer:
        self.asked.append(ref.name)
        if ref.kind not in self.kinds:
            return UNKNOWN
        found = self.copies.get((ref.kind, ref.namespace, ref.name))
        return ABSENT if found is None else CachedAnswer("present", copy.deepcopy(found))


def watched(make_harness: HarnessFactory, **overrides: Any) -> tuple[Any, Watch]:
    """A harness with the watch; namespaces are not created (as for an Application confined to
    its own namespace), so the only reads counted are the objects'."""
    watch = Watch()
    h = make_harness(cached_reads=watch, on_written=watch.written,
                     missing_namespaces_policy=MissingNamespacesPolicy.DO_NOT_CREATE, **overrides)
    warm(h)
    return h, watch


def test_a_first_apply_and_a_no_op_call_read_nothing(make_harness: HarnessFactory, batch_reads: bool) -> None:
    h, watch = watched(make_harness)
    objects = [configmap(f"c{i}") for i in range(N)]
    assert h.apply_checkpointed(objects) is False
    assert verbs(h) == {"apply": N}  # the creates, nothing read
    assert set(h.phases().values()) == {"Creating"}
    assert h.apply_checkpointed(objects) is True  # readiness from the copies of the creates' responses
    assert verbs(h) == {}
    assert set(h.state().values()) == {("Ready", "Current")}
    assert h.apply_checkpointed(objects) is True
    assert verbs(h) == {}
    assert watch.asked.count("c0") == 4  # step 5, then the wave of each call


def test_a_copy_out_of_sync_is_read_live_before_it_is_updated(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h, _ = watched(make_harness)
    objects = [configmap(f"c{i}") for i in range(N)]
    h.apply_checkpointed(objects)
    h.apply_checkpointed(objects)
    verbs(h)
    changed = [configmap("c0", data={"k": "changed"}), *objects[1:]]
    assert h.apply_checkpointed(changed) is False
    assert verbs(h) == {"get": 1, "apply": 1}  # c0 read live, then applied against it
    assert kube.get("v1", "ConfigMap", "c0", namespace)["data"] == {"k": "changed"}  # type: ignore[index]
    assert h.apply_checkpointed(changed) is True
    assert verbs(h) == {}


def test_an_unlabelled_object_the_watch_never_saw_is_found_by_its_refused_create_and_adopted(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    kube.create(configmap("b", namespace, data={"pre": "unlabelled"}))
    h, _ = watched(make_harness)
    objects = [configmap("a"), configmap("b")]
    assert h.apply_checkpointed(objects) is False
    # a created; b's create refused (409), b read live and adopted (the default policy allows an
    # unowned object) with a forced apply.
    assert verbs(h) == {"get": 1, "apply": 3}
    live = kube.get("v1", "ConfigMap", "b", namespace)
    assert live is not None
    assert live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)
    assert live["data"] == {"k": "v", "pre": "unlabelled"}  # what any adopting apply leaves: the other manager's key
    assert h.apply_checkpointed(objects) is True
    assert set(h.state().values()) == {("Ready", "Current")}


def test_a_foreign_object_the_watch_never_saw_is_refused_with_the_adoption_checks_message(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    kube.create(foreign("b", namespace))
    h, _ = watched(make_harness)
    with pytest.raises(OwnershipConflictError) as conflict:
        h.apply_checkpointed([configmap("a"), configmap("b")])
    assert str(conflict.value) == f"owner conflict; object /v1, Kind=ConfigMap {namespace}/b is owned by {OTHER}"
    live = kube.get("v1", "ConfigMap", "b", namespace)
    assert live is not None
    assert live["data"] == {"pre": "foreign"}
    assert live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(OTHER)
    assert h.reconciler.report.conflicts == (f"/v1, Kind=ConfigMap {namespace}/b",)


def test_a_namespace_is_read_even_when_the_watch_says_absent(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h, watch = watched(make_harness, adoption_policy=AdoptionPolicy.ALWAYS,
                       cluster_scoped_adoption_policy=AdoptionPolicy.ALWAYS)  # the caller's cap (issue 27)
    name = f"{namespace}-extra"
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    kube.create(ns)  # someone else's: adopted, never deleted (docs/operator.md#identity-hostile-input-and-limits)
    try:
        assert h.apply_checkpointed([ns]) is False
        # Read at step 5 (never trusted absent) and in the wave, as without a watch; then adopted.
        assert verbs(h) == {"get": 2, "apply": 1}
        assert name in watch.asked
        assert [item.adopted for item in h.inventory] == [True]
    finally:
        kube.delete("v1", "Namespace", name)
