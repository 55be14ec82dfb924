"""Adoption of existing cluster-scoped objects is the caller's setting, never the object's
(docs/reconciler.md#adoption-policy, issue 27): an object's ``adoption-policy: always`` only
narrows ``cluster_scoped_adoption_policy``. And an ownership conflict names the foreign owner
as its owner label says, never the claimant (whatever the owner-id annotation was made to say).

The cluster-scoped objects are ClusterRoles named after the test's namespace, removed at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import NAME, OWNER_KEY, HarnessFactory, Kube, configmap

from oam_operator.reconciler.errors import OwnershipConflictError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.objectpolicies import AdoptionPolicy

RBAC = "rbac.authorization.k8s.io"


def cluster_role(name: str, *, adoption: str | None = None, owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if adoption is not None:
        meta["annotations"] = {f"{NAME}/adoption-policy": adoption}
    if owner is not None:
        meta["labels"] = {OWNER_KEY: hash_owner_id(owner)}
        meta["annotations"] = {**meta.get("annotations", {}), OWNER_KEY: owner}
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": meta, "rules": []}


@pytest.fixture
def role(kube: Kube, namespace: str) -> Iterator[str]:
    name = f"{namespace}-shared"
    yield name
    kube.delete(f"{RBAC}/v1", "ClusterRole", name)


def _conflict(h: Any, objects: list[dict[str, Any]]) -> str:
    before = h.stored
    with pytest.raises(OwnershipConflictError) as refused:
        h.apply(objects)
    assert h.stored == before  # nothing recorded
    return str(refused.value)


def _owner_label(kube: Kube, name: str) -> str | None:
    live = kube.get(f"{RBAC}/v1", "ClusterRole", name)
    assert live is not None
    labels: dict[str, str] = live["metadata"].get("labels") or {}
    return labels.get(OWNER_KEY)


def test_an_objects_always_does_not_adopt_an_unowned_cluster_scoped_object(
    make_harness: HarnessFactory, kube: Kube, role: str
) -> None:
    kube.create(cluster_role(role))
    h = make_harness()  # cluster_scoped_adoption_policy: the default, Never
    assert _conflict(h, [cluster_role(role, adoption="always")]) == (
        f"found existing cluster-scoped object {RBAC}/v1, Kind=ClusterRole {role} without owner; the adoption "
        "policy for cluster-scoped objects (Never) does not allow adopting it")
    assert _owner_label(kube, role) is None
    assert h.client.accounting.writes == 0


def test_the_callers_setting_adopts_and_the_objects_never_still_narrows_it(
    make_harness: HarnessFactory, kube: Kube, role: str
) -> None:
    kube.create(cluster_role(role))
    narrowed = make_harness(cluster_scoped_adoption_policy=AdoptionPolicy.IF_UNOWNED)
    assert _conflict(narrowed, [cluster_role(role, adoption="never")]) == (
        f"found existing object {RBAC}/v1, Kind=ClusterRole {role} without owner")
    h = make_harness(cluster_scoped_adoption_policy=AdoptionPolicy.IF_UNOWNED)
    h.apply_until([cluster_role(role)], bool, "the adopted ClusterRole to be ready")
    assert _owner_label(kube, role) == hash_owner_id(h.owner_id)


def test_another_owners_cluster_scoped_object_is_taken_over_only_when_the_caller_allows_it(
    make_harness: HarnessFactory, kube: Kube, role: str
) -> None:
    kube.create(cluster_role(role, owner="other-tenant/ns/app"))
    h = make_harness(cluster_scoped_adoption_policy=AdoptionPolicy.IF_UNOWNED)
    assert _conflict(h, [cluster_role(role, adoption="always")]) == (
        f"owner conflict; object {RBAC}/v1, Kind=ClusterRole {role} is owned by other-tenant/ns/app; the adoption "
        "policy for cluster-scoped objects (IfUnowned) does not allow taking it over")
    assert _owner_label(kube, role) == hash_owner_id("other-tenant/ns/app")
    taker = make_harness(cluster_scoped_adoption_policy=AdoptionPolicy.ALWAYS)
    taker.apply_until([cluster_role(role, adoption="always")], bool, "the taken-over ClusterRole to be ready")
    assert _owner_label(kube, role) == hash_owner_id(taker.owner_id)


def test_two_owners_claiming_one_object_the_second_is_told_the_firsts_id(
    make_harness: HarnessFactory, kube: Kube, role: str
) -> None:
    first = make_harness(owner="first")
    first.apply_until([cluster_role(role)], bool, "the first owner's ClusterRole to be ready")
    second = make_harness(owner="second", cluster_scoped_adoption_policy=AdoptionPolicy.ALWAYS)
    assert _conflict(second, [cluster_role(role)]) == (
        f"owner conflict; object {RBAC}/v1, Kind=ClusterRole {role} is owned by {first.owner_id}")
    assert second.owner_id != first.owner_id


def test_an_owner_label_without_its_annotation_is_named_by_the_label(
    make_harness: HarnessFactory, kube: Kube, role: str
) -> None:
    labelled = cluster_role(role)
    labelled["metadata"]["labels"] = {OWNER_KEY: hash_owner_id("somebody")}
    kube.create(labelled)
    h = make_harness(cluster_scoped_adoption_policy=AdoptionPolicy.IF_UNOWNED)
    assert _conflict(h, [cluster_role(role)]) == (
        f"owner conflict; object {RBAC}/v1, Kind=ClusterRole {role} is owned by {hash_owner_id('somebody')}")


def test_an_annotation_claiming_the_claimant_is_not_believed_the_label_is(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    """Anyone who may edit the object can write its owner-id annotation, even as the claimant's
    id; the label says who owns it, and the conflict names that owner."""
    first = make_harness(owner="first")
    first.apply_until([configmap("shared")], bool, "the first owner's ConfigMap to be ready")
    second = make_harness(owner="second")
    live = kube.get("v1", "ConfigMap", "shared", namespace)
    assert live is not None
    live["metadata"]["annotations"][OWNER_KEY] = second.owner_id  # the label stays the first owner's
    kube.client.request("update", "PUT", f"/api/v1/namespaces/{namespace}/configmaps/shared", body=live)
    key = f"/v1, Kind=ConfigMap {namespace}/shared"
    assert _conflict(second, [configmap("shared")]) == (
        f"owner conflict; object {key} is owned by {hash_owner_id(first.owner_id)}")
