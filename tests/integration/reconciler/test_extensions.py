"""Where the reconciler goes beyond the Go implementation (docs/reconciler.md#scale-and-safety), and the remaining
integration checks: Events, Job readiness, an inventory written by the Go implementation."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from conftest import GROUP, NAME, OWNER_KEY, HarnessFactory, Kube, configmap, secret

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import OwnershipConflictError, PermanentApiError, TransientApiError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.inventory import load_inventory
from oam_operator.reconciler.ratelimit import RateLimiter


def steady_objects() -> list[dict[str, Any]]:
    return [configmap(f"c{i}") for i in range(6)] + [secret(f"s{i}") for i in range(4)]


def test_steady_state_is_two_lists(make_harness: HarnessFactory, namespace: str) -> None:
    h = make_harness(batch_reads=True)
    objects = steady_objects()
    h.apply_until(objects, bool, "ready")
    h.client.accounting.reset()
    assert h.apply(objects) is True
    acc = h.client.accounting
    assert acc.count(verb="list") == 2
    assert acc.count(verb="get") == 0
    assert acc.writes == 0
    assert h.reconciler.report.operations == {"list": 2}


def test_label_removed_by_hand_found_by_fallback_get(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    results: dict[bool, Any] = {}
    for batched in (True, False):
        h = make_harness(owner=f"app-{batched}", batch_reads=batched)
        objects = [configmap(f"{batched}-a".lower()), configmap(f"{batched}-b".lower())]
        h.apply_until(objects, bool, "ready")
        kube.merge("v1", "ConfigMap", f"{batched}-a".lower(), namespace, {"metadata": {"labels": {OWNER_KEY: None}}})
        h.client.accounting.reset()
        assert h.apply(objects) is False
        if batched:
            assert h.client.accounting.count(verb="list") == 1
            assert h.client.accounting.count(verb="get") == 1  # the miss
        results[batched] = sorted(h.state().values())
        assert h.apply(objects) is True
        live = kube.get("v1", "ConfigMap", f"{batched}-a".lower(), namespace)
        assert live is not None and live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)
    assert results[True] == results[False] == [("Ready", "Current"), ("Updating", "InProgress")]


def test_list_forbidden_falls_back_to_gets(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    user = f"system:serviceaccount:{namespace}:deployer"
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "no-list", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "patch"]}],
        }
    )
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "no-list", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "no-list"},
            "subjects": [{"kind": "User", "name": user}],
        }
    )
    h = make_harness(batch_reads=True)
    objects = steady_objects()
    h.apply_until(objects, bool, "ready")
    impersonating = h.client.impersonating(user)
    tenant = make_harness(client=impersonating, batch_reads=True)
    tenant.stored, tenant.owner_id = h.stored, h.owner_id
    impersonating.accounting.reset()
    assert tenant.apply(objects) is True
    acc = impersonating.accounting
    # One forbidden LIST per (type, namespace) group, then GETs for the rest of the call.
    assert acc.count(verb="list", status=403) == 2
    assert acc.count(verb="list") == 2
    assert acc.count(verb="get", status=200) == 10
    assert acc.writes == 0


def test_concurrency_bound_and_priority_levels(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness(concurrency=4)
    other = f"{namespace}-r"
    objects: list[dict[str, Any]] = [configmap(f"c{i:02d}") for i in range(50)]
    objects += [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "rb", "namespace": other},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "someone"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "r", "namespace": other},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}},
    ]
    h.apply(objects)
    h.client.accounting.reset()
    assert h.apply(objects) is False
    assert h.client.accounting.count(verb="apply") == 53
    assert h.client.accounting.max_in_flight <= 4
    rv = {
        kind: int(kube.get(api, kind, name, ns)["metadata"]["resourceVersion"])  # type: ignore[index]
        for api, kind, name, ns in (
            ("v1", "Namespace", other, ""),
            ("rbac.authorization.k8s.io/v1", "Role", "r", other),
            ("rbac.authorization.k8s.io/v1", "RoleBinding", "rb", other),
        )
    }
    assert rv["Namespace"] < rv["Role"] < rv["RoleBinding"]


def test_rate_limit_qps_10_burst_10(kube: Kube, kube_api: Any, namespace: str) -> None:
    client = ClusterClient(kube_api, rate_limiter=RateLimiter(10, 10))
    kube.create(configmap("c", namespace))
    resource = client.resource_for("v1", "ConfigMap")  # discovery: a few requests of the burst
    assert resource is not None
    client.rate_limiter.configure(10, 10)
    started = time.monotonic()
    for _ in range(60):
        client.get(resource, namespace, "c")
    assert time.monotonic() - started >= 5.0 - 0.05
    client.close()


def test_invalid_object_in_a_concurrent_level(make_harness: HarnessFactory, namespace: str) -> None:
    h = make_harness()
    objects = [configmap("a"), configmap("Bad_One"), configmap("b"), configmap("Bad_Two"), configmap("c")]
    assert h.apply(objects) is False
    with pytest.raises(PermanentApiError) as info:
        h.apply(objects)
    assert str(info.value).startswith(
        f"error creating object /v1, Kind=ConfigMap {namespace}/Bad_One: 422 Unprocessable Entity: "
    )
    assert info.value.status == 422 and not info.value.retryable
    assert h.phases() == {
        "a": "Creating",
        "b": "Creating",
        "c": "Creating",
        "Bad_One": "ScheduledForApplication",
        "Bad_Two": "ScheduledForApplication",
    }


def test_relabelled_object_is_not_updated_unless_always(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    h = make_harness()
    h.apply_until([configmap("c")], bool, "ready")
    kube.merge(
        "v1",
        "ConfigMap",
        "c",
        namespace,
        {"metadata": {"labels": {OWNER_KEY: hash_owner_id("other")}, "annotations": {OWNER_KEY: "other"}}},
    )
    before = kube.get("v1", "ConfigMap", "c", namespace)
    with pytest.raises(OwnershipConflictError) as info:
        h.apply([configmap("c")])
    assert str(info.value) == f"owner conflict; object /v1, Kind=ConfigMap {namespace}/c is owned by other"
    assert h.reconciler.report.conflicts == (f"/v1, Kind=ConfigMap {namespace}/c",)
    assert kube.get("v1", "ConfigMap", "c", namespace) == before
    assert h.apply([configmap("c", adoption_policy="always")]) is False
    assert h.phases() == {"c": "Updating"}
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None and live["metadata"]["labels"][OWNER_KEY] == hash_owner_id(h.owner_id)


def test_recreate_of_adopted_unlabelled_object(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    uid = kube.create(configmap("c", namespace))["metadata"]["uid"]
    h = make_harness()
    objects = [configmap("c", update_policy="recreate")]
    assert h.apply(objects) is False
    assert h.apply(objects) is False
    assert h.phases() == {"c": "Updating"}
    h.apply_until(objects, bool, "the recreated object to be ready")
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None and live["metadata"]["uid"] != uid


def test_purge_target_taken_over_is_left_in_place(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness()
    objects = [configmap("c", purge_order="0"), configmap("d")]
    h.apply(objects)
    h.apply(objects)
    assert h.apply(objects) is False
    assert h.phases() == {"c": "ScheduledForCompletion", "d": "Ready"}
    kube.merge("v1", "ConfigMap", "c", namespace, {"metadata": {"labels": {OWNER_KEY: hash_owner_id("x")}}})
    assert h.apply(objects) is True
    assert h.state() == {"c": ("Completed", ""), "d": ("Ready", "Current")}
    assert h.reconciler.report.conflicts == (f"/v1, Kind=ConfigMap {namespace}/c",)
    assert kube.get("v1", "ConfigMap", "c", namespace) is not None


def test_orphaned_object_adopted_by_another_owner(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    a = make_harness(owner="a")
    objects = [configmap("c", delete_policy="orphan")]
    a.apply_until(objects, bool, "ready")
    assert a.apply([]) is True
    b = make_harness(owner="b")
    b.apply_until([configmap("c")], bool, "B to adopt the object")
    live = kube.get("v1", "ConfigMap", "c", namespace)
    assert live is not None and live["metadata"]["annotations"][OWNER_KEY] == b.owner_id


def test_conflict_is_transient(kube: Kube, namespace: str) -> None:
    resource = kube.resource("v1", "ConfigMap")
    kube.client.create(resource, namespace, configmap("c", namespace), field_manager="t")
    with pytest.raises(TransientApiError) as info:
        kube.client.create(resource, namespace, configmap("c", namespace), field_manager="t")
    assert info.value.status == 409 and info.value.retryable
    assert str(info.value).startswith("409 Conflict: ")


def test_events(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    h = make_harness(enable_events=True)
    h.apply_until([configmap("a"), configmap("b", delete_policy="orphan")], bool, "ready")
    h.apply([configmap("a", data={"k": "2"}), configmap("b", delete_policy="orphan")])
    assert h.apply_until([], bool, "pruning") is True
    assert h.client.flush_events(30)  # posted in the background after each call
    events = kube.client.list(kube.resource("v1", "Event"), namespace)
    seen = {(e["involvedObject"]["name"], e["reason"]) for e in events}
    assert {("a", "Created"), ("a", "Updated"), ("a", "Deleted"), ("b", "Created"), ("b", "Orphaned")} <= seen
    created = next(e for e in events if e["reason"] == "Created")
    assert created["source"]["component"] == NAME and created["type"] == "Normal"
    assert created["message"] == "Object successfully created"


@pytest.mark.requires_bare_apiserver
def test_job_ready_only_when_complete(make_harness: HarnessFactory, kube: Kube, namespace: str) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
            }
        },
    }
    h = make_harness()
    h.apply([job])
    h.apply([job])
    resource = kube.resource("batch/v1", "Job")

    def patch_status(status: dict[str, Any]) -> None:
        kube.client.request(
            "status",
            "PATCH",
            resource.path(namespace, "j") + "/status",
            body={"status": status},
            content_type="application/merge-patch+json",
        )

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    patch_status({"startTime": now, "active": 1})
    assert h.apply([job]) is False
    assert h.state() == {"j": ("Creating", "InProgress")}
    patch_status(
        {
            "active": 0,
            "succeeded": 1,
            "completionTime": now,
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastTransitionTime": now},
            ],
        }
    )
    assert h.apply([job]) is True
    assert h.state() == {"j": ("Ready", "Current")}


def test_go_written_inventory_is_continued(
    make_harness: HarnessFactory, kube: Kube, namespace: str, baz_crd: dict[str, Any]
) -> None:
    h = make_harness()
    crd = baz_crd["metadata"]["name"]
    hashed = hash_owner_id(h.owner_id)
    # Objects as the Go implementation would have left them (its digests differ from ours).
    for name in ("ready", "creating", "redundant"):
        obj = configmap(name, namespace)
        obj["metadata"]["labels"] = {OWNER_KEY: hashed}
        obj["metadata"]["annotations"] = {OWNER_KEY: h.owner_id, f"{NAME}/digest": "go-digest"}
        kube.create(obj)
    base = {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": namespace}
    policies = {
        "adoptionPolicy": "IfUnowned",
        "reconcilePolicy": "OnObjectChange",
        "updatePolicy": "SsaOverride",
        "deletePolicy": "Delete",
        "applyOrder": 0,
        "deleteOrder": 0,
    }
    go_inventory = [
        {
            "group": "apiextensions.k8s.io",
            "version": "v1",
            "kind": "CustomResourceDefinition",
            "name": crd,
            **policies,
            "managedTypes": [{"group": GROUP, "version": "*", "kind": "Baz"}],
            "digest": "go-digest",
            "phase": "ScheduledForApplication",
            "status": "InProgress",
        },
        {
            **base,
            "name": "ready",
            **policies,
            "digest": "go-digest",
            "phase": "Ready",
            "status": "Current",
            "lastAppliedAt": "2026-03-01T10:04:05Z",
        },
        {
            **base,
            "name": "creating",
            **policies,
            "digest": "go-digest",
            "phase": "Creating",
            "status": "InProgress",
            "lastAppliedAt": "2026-03-01T10:04:05Z",
        },
        {
            **base,
            "name": "updating",
            **policies,
            "digest": "go-digest",
            "phase": "Updating",
            "status": "InProgress",
            "lastAppliedAt": "2026-03-01T10:04:05Z",
        },
        {**base, "name": "completed", **policies, "digest": "go-digest", "phase": "Completed"},
        {
            **base,
            "name": "redundant",
            **policies,
            "deletePolicy": "OrphanOnApply",
            "digest": "",
            "phase": "ScheduledForDeletion",
            "status": "Terminating",
        },
        {**base, "name": "gone", **policies, "digest": "", "phase": "Deleting", "status": "Terminating"},
        {
            **base,
            "name": "completing",
            **policies,
            "digest": "go-digest",
            "phase": "ScheduledForCompletion",
            "status": "Current",
        },
    ]
    h.stored = json.dumps(go_inventory)
    assert len(load_inventory(h.stored)) == len(go_inventory)
    objects = [baz_crd] + [configmap(n) for n in ("ready", "creating", "updating", "completed", "completing")]
    h.apply_until(objects, bool, "the Go inventory to be continued to done")
    written = json.loads(h.stored)
    allowed = {
        "group",
        "version",
        "kind",
        "namespace",
        "name",
        "adoptionPolicy",
        "reconcilePolicy",
        "updatePolicy",
        "deletePolicy",
        "applyOrder",
        "deleteOrder",
        "managedTypes",
        "digest",
        "phase",
        "status",
        "lastAppliedAt",
    }
    assert all(set(item) <= allowed for item in written)
    assert {i["name"] for i in written} == {crd, "ready", "creating", "updating", "completed", "completing"}
    assert all(i["phase"] == "Ready" and i["status"] == "Current" for i in written)
    crd_item = next(i for i in written if i["name"] == crd)
    assert crd_item["managedTypes"] == [{"group": GROUP, "version": "*", "kind": "Baz"}]
    assert {i["updatePolicy"] for i in written} == {"SsaOverride"}
    released = kube.get("v1", "ConfigMap", "redundant", namespace)
    assert released is not None and OWNER_KEY not in (released["metadata"].get("labels") or {})
