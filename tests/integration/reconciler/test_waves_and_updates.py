"""apply(): waves, purges, managed instances, update and reconcile policies
(docs/reconciler.md#waves, docs/reconciler.md#policies)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from conftest import GROUP, TEST_FINALIZER, HarnessFactory, Kube, configmap, custom, secret


class ShiftedClock:
    """UTC now plus an offset the test moves forward."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def test_waves_and_purge(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [
        configmap("c", apply_order="0", purge_order="1"),
        custom("Foo", "f", finalizer=True, apply_order="1", purge_order="1"),
        secret("s", apply_order="2"),
    ]
    S = "ScheduledForApplication"
    assert h.apply(objects) is False
    assert h.state() == {"c": (S, "InProgress"), "f": (S, "InProgress"), "s": (S, "InProgress")}
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Creating", "InProgress"), "f": (S, "InProgress"), "s": (S, "InProgress")}
    assert h.reconciler.report.wave == 0
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Ready", "Current"), "f": ("Creating", "InProgress"), "s": (S, "InProgress")}
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Ready", "Current"), "f": ("Creating", "InProgress"), "s": (S, "InProgress")}
    assert h.reconciler.report.outcome == "waiting" and h.reconciler.report.wave == 1
    kube.observe("Foo", "f", namespace)
    assert h.apply(objects) is False
    sfc = "ScheduledForCompletion"
    assert h.state() == {"c": (sfc, "Current"), "f": (sfc, "Current"), "s": (S, "InProgress")}
    assert h.apply(objects) is False
    assert h.state() == {
        "c": ("Completing", "Terminating"),
        "f": ("Completing", "Terminating"),
        "s": (S, "InProgress"),
    }
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Completed", ""), "f": ("Completing", "Terminating"), "s": (S, "InProgress")}
    assert h.apply(objects) is False  # the Foo is held by its finalizer
    assert h.state()["f"] == ("Completing", "Terminating")
    kube.finalize(f"{GROUP}/v1", "Foo", "f", namespace)
    kube.wait_gone(f"{GROUP}/v1", "Foo", "f", namespace)
    assert h.apply(objects) is False
    assert h.state() == {"c": ("Completed", ""), "f": ("Completed", ""), "s": ("Creating", "InProgress")}
    assert h.apply(objects) is True
    assert h.state() == {"c": ("Completed", ""), "f": ("Completed", ""), "s": ("Ready", "Current")}
    assert kube.get("v1", "ConfigMap", "c", namespace) is None
    assert kube.get(f"{GROUP}/v1", "Foo", "f", namespace) is None
    # Completed objects are not re-created while their manifest is unchanged.
    assert h.apply(objects) is True
    assert kube.get("v1", "ConfigMap", "c", namespace) is None


def test_managed_instances_postponed(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    objects = [custom("Foo", "f"), custom("Bar", "b"), custom("Baz", "z"), baz_crd]
    crd = baz_crd["metadata"]["name"]
    S = "ScheduledForApplication"
    assert h.apply(objects) is False
    assert h.apply(objects) is False
    assert h.phases() == {"f": "Creating", "b": S, "z": S, crd: "Creating"}
    h.apply_until(objects, lambda _: h.phases()[crd] == "Ready", "the CRD to become ready")
    assert h.phases() == {"f": "Creating", "b": S, "z": S, crd: "Ready"}
    kube.observe("Foo", "f", namespace)
    assert h.apply(objects) is False
    assert h.phases() == {"f": "Ready", "b": S, "z": S, crd: "Ready"}
    assert h.apply(objects) is False
    assert h.phases() == {"f": "Ready", "b": "Creating", "z": "Creating", crd: "Ready"}
    assert h.apply(objects) is True
    assert set(h.phases().values()) == {"Ready"}


def test_updates_only_changed_objects(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [custom("Foo", f"f{i}", spec={"size": i}) for i in range(3)]
    h.apply(objects)
    h.apply(objects)
    for i in range(3):
        kube.observe("Foo", f"f{i}", namespace)
    assert h.apply(objects) is True
    changed = [custom("Foo", "f0", spec={"size": 10}), custom("Foo", "f1", spec={"size": 11}), objects[2]]
    assert h.apply(changed) is False
    assert h.phases() == {"f0": "Updating", "f1": "Updating", "f2": "Ready"}
    for name, size in (("f0", 10), ("f1", 11), ("f2", 2)):
        live = kube.get(f"{GROUP}/v1", "Foo", name, namespace)
        assert live is not None and live["spec"] == {"size": size}


def test_recreate_keeps_uid_without_change_and_replaces_on_change(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    objects = [configmap("c", update_policy="recreate")]
    h.apply_until(objects, bool, "ready")
    uid = kube.get("v1", "ConfigMap", "c", namespace)["metadata"]["uid"]  # type: ignore[index]
    assert h.apply(objects) is True
    assert kube.get("v1", "ConfigMap", "c", namespace)["metadata"]["uid"] == uid  # type: ignore[index]
    changed = [configmap("c", data={"k": "new"}, update_policy="recreate")]
    assert h.apply(changed) is False
    assert h.phases() == {"c": "Updating"}
    h.apply_until(changed, bool, "the recreated ConfigMap to become ready")
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None and live["metadata"]["uid"] != uid and live["data"] == {"k": "new"}


def _add_foreign_fields(kube: Kube, namespace: str, name: str) -> None:
    for manager in ("kubectl", "kubectl-actor", "other-actor"):
        kube.merge(
            "v1",
            "ConfigMap",
            name,
            namespace,
            {"metadata": {"annotations": {f"by-{manager}": "x"}}, "data": {manager: "x"}},
            manager=manager,
        )


def test_ssa_override_reclaims_kubectl_fields(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    h.apply_until([configmap("c")], bool, "ready")
    _add_foreign_fields(kube, namespace, "c")
    changed = [configmap("c", data={"k": "v2"})]
    assert h.apply(changed) is False
    assert h.phases() == {"c": "Updating"}
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None
    assert live["data"] == {"k": "v2", "other-actor": "x"}
    annotations = live["metadata"]["annotations"]
    assert "by-other-actor" in annotations
    assert "by-kubectl" not in annotations and "by-kubectl-actor" not in annotations


def test_ssa_merge_keeps_kubectl_fields_and_replace_to_ssa_drops_fields(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    h.apply_until([configmap("c", update_policy="ssa-merge")], bool, "ready")
    _add_foreign_fields(kube, namespace, "c")
    assert h.apply([configmap("c", data={"k": "v2"}, update_policy="ssa-merge")]) is False
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None
    assert live["data"] == {"k": "v2", "kubectl": "x", "kubectl-actor": "x", "other-actor": "x"}

    # An object written with Replace and later switched to SsaMerge: a dropped field goes.
    replace = [configmap("r", data={"a": "1", "b": "2"}, update_policy="replace")]
    h2 = make_harness(owner="other-app")
    h2.apply_until(replace, bool, "ready")
    switched = [configmap("r", data={"a": "1"}, update_policy="SsaMerge")]
    assert h2.apply(switched) is False
    live = kube.get("v1", "ConfigMap", "r", namespace)
    assert live is not None and live["data"] == {"a": "1"}


def test_replace_keeps_foreign_finalizer(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    h.apply_until([configmap("c", update_policy="replace")], bool, "ready")
    kube.merge("v1", "ConfigMap", "c", namespace, {"metadata": {"finalizers": [TEST_FINALIZER]}})
    assert h.apply([configmap("c", data={"k": "v2"}, update_policy="replace")]) is False
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None and live["data"] == {"k": "v2"}
    assert live["metadata"]["finalizers"] == [TEST_FINALIZER]
    kube.finalize("v1", "ConfigMap", "c", namespace)


def test_once_policy(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    h.apply_until([configmap("c", reconcile_policy="once")], bool, "ready")
    assert h.item("c").digest == "__once__"
    h.client.accounting.reset()
    assert h.apply([configmap("c", data={"k": "changed"}, reconcile_policy="Once")]) is True
    assert h.client.accounting.writes == 0
    assert kube.get("v1", "ConfigMap", "c", namespace)["data"] == {"k": "v"}  # type: ignore[index]
    # Switching away from Once applies once.
    assert h.apply([configmap("c", data={"k": "changed"})]) is False
    assert h.phases() == {"c": "Updating"}
    assert kube.get("v1", "ConfigMap", "c", namespace)["data"] == {"k": "changed"}  # type: ignore[index]
    assert h.apply([configmap("c", data={"k": "changed"})]) is True


def test_component_digest_reapplies_exactly_those_objects(make_harness: HarnessFactory, namespace: str) -> None:
    h = make_harness()
    objects = [configmap("a", reconcile_policy="on-object-or-component-change"), configmap("b")]
    h.apply_until(objects, bool, "ready")
    assert h.item("a").digest.endswith("@c1") and "@" not in h.item("b").digest
    inventory = h.inventory
    assert h.reconciler.apply(inventory, objects, h.namespace, h.owner_id, "c2") is False
    assert {i.name: i.phase.value for i in inventory} == {"a": "Updating", "b": "Ready"}


def test_reapply_interval(make_harness: HarnessFactory, namespace: str) -> None:
    clock = ShiftedClock()
    h = make_harness(clock=clock)
    objects = [configmap("c"), configmap("o", reconcile_policy="once"), configmap("s", reapply_interval="1h")]
    h.apply_until(objects, bool, "ready")
    clock.offset = timedelta(minutes=10)  # past the 9-minute interval, not past 1 h
    h.client.accounting.reset()
    before = h.item("c").last_applied_at
    # Re-applied, unchanged: the API server keeps its resourceVersion, so it stays Ready in the
    # same call (docs/reconciler.md#a-no-op-write).
    assert h.apply(objects) is True
    assert h.phases() == {"c": "Ready", "o": "Ready", "s": "Ready"}
    assert h.client.accounting.count(verb="apply") == 1
    after = h.item("c").last_applied_at
    assert before is not None and after is not None and after - before >= timedelta(minutes=10)


def test_wave_never_ready_blocks_pruning(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    foo = custom("Foo", "f")
    h.apply([configmap("c"), foo])
    h.apply([configmap("c"), foo])
    for _ in range(3):
        assert h.apply([foo]) is False
        assert h.phases() == {"c": "ScheduledForDeletion", "f": "Creating"}
        assert kube.get("v1", "ConfigMap", "c", namespace) is not None
    kube.observe("Foo", "f", namespace)
    assert h.apply([foo]) is False
    assert h.phases() == {"c": "Deleting", "f": "Ready"}
    assert h.apply([foo]) is True
    assert h.phases() == {"f": "Ready"}


def test_service_accounts_are_created_before_the_rest_of_their_wave(make_harness: Any, kube: Any,
                                                                    namespace: str) -> None:
    """Issue 14: a Pod's ServiceAccount exists before its workload, whatever the input order.

    The Service is listed first; kind priorities create the ServiceAccount first. Creation order
    is read from the objects' resourceVersions (etcd revisions on this control plane; neither
    object is written again by a controller)."""
    h = make_harness(concurrency=1)  # one object at a time: the order is the reconciler's, not a race
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web"}}
    h.apply([service, account])
    h.apply([service, account])
    created_service = kube.get("v1", "Service", "web", namespace)
    created_account = kube.get("v1", "ServiceAccount", "web", namespace)
    assert created_service is not None and created_account is not None
    assert int(created_account["metadata"]["resourceVersion"]) < int(created_service["metadata"]["resourceVersion"])
