"""First apply costs about one request per object (docs/reconciler.md#batched-reads for new objects,
docs/reconciler.md#events-on-dependent-objects for background
Events), with the same outcomes as GETs: counted by the client's request accounting; every
scenario runs with batched reads and GET-only (the ``batch_reads`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import OWNER_KEY, HarnessFactory, Kube, configmap

from oam_operator.reconciler.errors import OwnershipConflictError
from oam_operator.reconciler.identity import hash_owner_id
from oam_operator.reconciler.objectpolicies import AdoptionPolicy

N = 12
OTHER = "other-owner"


def warm(h: Any) -> None:
    """Discovery out of the way, counters at zero."""
    assert h.client.resource_for("v1", "ConfigMap") is not None
    h.client.accounting.reset()


def verbs(h: Any) -> dict[str, int]:
    counts = h.client.accounting.by_verb()
    h.client.accounting.reset()
    return counts


def foreign(name: str, namespace: str) -> dict[str, Any]:
    obj = configmap(name, namespace, data={"pre": "foreign"})
    obj["metadata"]["labels"] = {OWNER_KEY: hash_owner_id(OTHER)}
    obj["metadata"]["annotations"] = {OWNER_KEY: OTHER}
    return obj


def test_first_apply_of_n_configmaps_request_counts(make_harness: HarnessFactory, batch_reads: bool) -> None:
    h = make_harness()
    objects = [configmap(f"c{i:02d}") for i in range(N)]
    warm(h)
    assert h.apply(objects) is False  # checkpoint
    assert verbs(h) == ({"list": 1} if batch_reads else {"get": N})
    assert h.reconciler.report.operations == ({"list": 1} if batch_reads else {"read": N})
    assert h.apply(objects) is False  # creates; step 12 reads the namespace once
    assert verbs(h) == ({"get": 1, "list": 1, "apply": N} if batch_reads else {"get": 1 + N, "apply": N})
    assert set(h.phases().values()) == {"Creating"}
    assert h.apply(objects) is True  # status: one owner-filtered LIST (and the namespace again)
    assert verbs(h) == ({"get": 1, "list": 1} if batch_reads else {"get": 1 + N})
    assert h.apply(objects) is True  # no-op
    assert verbs(h) == ({"list": 1} if batch_reads else {"get": N})
    assert set(h.state().values()) == {("Ready", "Current")}


def test_events_are_sent_after_the_wave(make_harness: HarnessFactory, batch_reads: bool) -> None:
    h = make_harness(enable_events=True)
    objects = [configmap(f"c{i:02d}") for i in range(N)]
    order: list[str] = []
    warm(h)
    h.client.accounting.listeners.append(lambda record: order.append(record.verb))
    h.apply(objects)
    assert h.apply(objects) is False
    assert h.client.flush_events(30)
    assert h.client.accounting.count(verb="event", status=201) == N
    assert h.client.accounting.count(verb="apply") == N
    # Every Event went out after the last write of the wave: none held a wave slot or token.
    assert max(i for i, v in enumerate(order) if v == "apply") < min(i for i, v in enumerate(order) if v == "event")
    assert h.reconciler.report.operations.get("create") == N


def _existing(kube: Kube, namespace: str) -> None:
    kube.create(configmap("u", namespace, data={"pre": "unlabelled"}))
    kube.create(foreign("f", namespace))


def _expect_refusal(h: Any, objects: list[dict[str, Any]], message: str, batch_reads: bool) -> None:
    before = h.stored
    warm(h)
    with pytest.raises(OwnershipConflictError) as info:
        h.apply(objects)
    assert str(info.value) == message
    assert h.stored == before
    # One unfiltered LIST saw the unlabelled and the foreign object exactly as GETs do.
    assert verbs(h) == ({"list": 1} if batch_reads else {"get": len(objects)})


def _owner(kube: Kube, name: str, namespace: str) -> str:
    live = kube.get("v1", "ConfigMap", name, namespace)
    assert live is not None
    return str(live["metadata"].get("labels", {}).get(OWNER_KEY, ""))


@pytest.mark.parametrize("policy", list(AdoptionPolicy), ids=[p.value for p in AdoptionPolicy])
def test_adoption_among_new_objects(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool, policy: AdoptionPolicy
) -> None:
    _existing(kube, namespace)
    h = make_harness(adoption_policy=policy)
    ours = hash_owner_id(h.owner_id)
    everything = [configmap(n) for n in ("a", "u", "b", "f", "c")]
    conflict_f = f"owner conflict; object /v1, Kind=ConfigMap {namespace}/f is owned by {OTHER}"
    if policy is AdoptionPolicy.NEVER:
        _expect_refusal(
            h, everything, f"found existing object /v1, Kind=ConfigMap {namespace}/u without owner", batch_reads
        )
        reordered = [configmap(n) for n in ("a", "f", "b", "u", "c")]
        _expect_refusal(h, reordered, conflict_f, batch_reads)
        adopted, desired = [], [configmap(n) for n in ("a", "b", "c")]
    elif policy is AdoptionPolicy.IF_UNOWNED:
        _expect_refusal(h, everything, conflict_f, batch_reads)
        adopted, desired = ["u"], [configmap(n) for n in ("a", "u", "b", "c")]
    else:
        adopted, desired = ["u", "f"], everything
    h.apply_until(desired, bool, "the new and adopted objects to be ready")
    for name in ("a", "b", "c", *adopted):
        assert _owner(kube, name, namespace) == ours
        assert kube.get("v1", "ConfigMap", name, namespace)["data"]["k"] == "v"  # type: ignore[index]
    if "u" not in adopted:
        assert _owner(kube, "u", namespace) == ""
    if "f" not in adopted:
        assert _owner(kube, "f", namespace) == hash_owner_id(OTHER)
        assert kube.get("v1", "ConfigMap", "f", namespace)["data"] == {"pre": "foreign"}  # type: ignore[index]


def test_objects_appearing_after_the_checkpoint_are_rechecked(
    make_harness: HarnessFactory, kube: Kube, namespace: str, batch_reads: bool
) -> None:
    h = make_harness()
    objects = [configmap(n) for n in ("a", "b", "c", "d")]
    assert h.apply(objects) is False  # checkpoint: nothing exists yet
    kube.create(foreign("b", namespace))
    kube.create(configmap("c", namespace, data={"pre": "unlabelled"}))
    warm(h)
    with pytest.raises(OwnershipConflictError) as info:
        h.apply(objects)
    key = f"/v1, Kind=ConfigMap {namespace}/b"
    assert str(info.value) == f"owner conflict; object {key} is owned by {OTHER}"
    assert h.reconciler.report.conflicts == (key,)
    assert h.state() == {
        "a": ("Creating", "InProgress"),
        "b": ("ScheduledForApplication", "InProgress"),
        "c": ("Updating", "InProgress"),  # unlabelled: taken over under IfUnowned
        "d": ("Creating", "InProgress"),
    }
    # a and d created, c updated, b untouched; the reads were one LIST (or four GETs).
    assert verbs(h) == ({"get": 1, "list": 1, "apply": 3} if batch_reads else {"get": 1 + 4, "apply": 3})
    assert _owner(kube, "b", namespace) == hash_owner_id(OTHER)
    assert _owner(kube, "c", namespace) == hash_owner_id(h.owner_id)


def test_new_objects_without_list_permission_are_read_by_get(
    make_harness: HarnessFactory, kube: Kube, namespace: str
) -> None:
    user = f"system:serviceaccount:{namespace}:reader"
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "no-list", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
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
    _existing(kube, namespace)
    base = make_harness(batch_reads=True)
    tenant = make_harness(client=base.client.impersonating(user), batch_reads=True)
    warm(tenant)
    with pytest.raises(OwnershipConflictError) as info:
        tenant.apply([configmap(n) for n in ("a", "u", "f")])
    assert str(info.value) == f"owner conflict; object /v1, Kind=ConfigMap {namespace}/f is owned by {OTHER}"
    acc = tenant.client.accounting
    assert acc.count(verb="list", status=403) == 1
    assert acc.count(verb="get", status=200) == 2 and acc.count(verb="get", status=404) == 1
    assert acc.total == 4


def test_a_forced_reapply_that_changes_nothing_posts_no_event(make_harness: HarnessFactory) -> None:
    """Issue 14: a ``reconcile`` request re-applies every object; the ones the server found
    identical (resourceVersion unchanged) post no "Object successfully updated" Event."""
    h = make_harness(enable_events=True)
    objects = [configmap(f"c{i:02d}") for i in range(3)]
    h.apply(objects)
    h.apply(objects)
    assert h.apply(objects) is True
    assert h.client.flush_events(30)

    def force_reapply() -> None:
        inventory = h.inventory
        for item in inventory:
            item.last_applied_at = None
        h._persist(inventory)

    force_reapply()
    h.client.accounting.reset()
    h.apply(objects)
    assert h.client.flush_events(30)
    assert h.client.accounting.count(verb="apply") == 3
    assert h.client.accounting.count(verb="event") == 0

    force_reapply()
    changed = [configmap("c00", data={"changed": "yes"}), *objects[1:]]
    h.client.accounting.reset()
    h.apply(changed)
    assert h.client.flush_events(30)
    assert h.client.accounting.count(verb="apply") == 3
    assert h.client.accounting.count(verb="event", status=201) == 1
