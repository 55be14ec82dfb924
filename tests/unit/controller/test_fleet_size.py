"""The fleet Application's status stays small at any number of objects per cluster
(docs/multicluster.md#measured-fleet-delivery): 50 clusters whose cluster Applications hold 200
objects each. Each cluster's inventory is in its own cluster Application; the fleet Application's
status has one ``clusters[]`` line per cluster and its inventory of the 50 cluster Applications."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from oam_operator.controller.reconcile import fleet
from oam_operator.controller.reconcile.limits import ETCD_REQUEST_LIMIT, REQUEST_RESERVE, json_bytes
from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.reconciler.inventory import InventoryItem
from tests.unit import unitkit
from tests.unit.controller.test_fleet import DOMAIN, Watched, environment, profile, run_until_settled
from tests.unit.unitkit import FakeReconciler, application, outcome, pass_environment

CLUSTERS = [f"prod-{region}-{number:02d}" for region in ("eu-west", "us-east") for number in range(25)]


def components(count: int) -> list[dict[str, Any]]:
    return [{"name": f"settings-{index:03d}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"settings-{index:03d}"},
        "data": {"version": "1"}}}} for index in range(count)]


def fleet_body(count: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    policies = [{"name": "prod", "type": "topology", "properties": {"clusterSelector": {"matchLabels": {"env": "prod"}}}},
                {"name": "slowly", "type": "rollout", "properties": {"maxConcurrent": "10%", "orderBy": "ring"}}]
    return application("shop-frontend", components=components(count), policies=policies, generation=1,
                       status=status)


@pytest.fixture
def distinct_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake reconciler's items with a digest each, as real objects have (not one repeated)."""
    fake = FakeReconciler()
    original = fake.apply

    def apply(inventory: list[InventoryItem], *args: Any, **kwargs: Any) -> bool:
        done = original(inventory, *args, **kwargs)
        for item in inventory:
            item.digest = hashlib.sha256(item.name.encode()).hexdigest()
        return done

    fake.apply = apply  # type: ignore[method-assign]
    monkeypatch.setattr(unitkit, "_injected_reconciler", lambda domain, client, options: fake)


def cluster_application_status(count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One cluster Application of ``count`` objects after its Ready pass: (the object, its status)."""
    body = fleet.child(fleet_body(count), CLUSTERS[0], DOMAIN, 1, labels={"env": "prod"})
    body["metadata"]["generation"] = 1
    env = pass_environment(profiles={CLUSTERS[0]: {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile",
                                                   **profile(CLUSTERS[0], env="prod")}})
    memory = Memory()
    result = unitkit.run_apply(body, memory, env)
    for _ in range(3):
        result = apply_pass({**body, "status": result.status}, memory, env)
    assert outcome(result.status) == ("Ready", "Ready", f"Applied revision 1: {count} objects ready")
    return body, result.status


def fleet_status(count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fleet Application's status once Ready on the 50 clusters, each holding ``count`` objects."""
    _, status = cluster_application_status(count)
    profiles = {name: profile(name, env="prod", ring=str(index // 5)) for index, name in enumerate(CLUSTERS)}
    body = fleet_body(count)
    copies = {}
    for name in CLUSTERS:
        copy = fleet.child(body, name, DOMAIN, 1, labels=profiles[name]["metadata"]["labels"])
        copy["metadata"]["generation"] = 1
        copy["status"] = {**status, "observedGeneration": 1}
        copies[copy["metadata"]["name"]] = copy
    ready = run_until_settled(body, Memory(), environment(profiles, Watched(copies)))
    assert outcome(ready.status) == ("Ready", "Ready", "Applied revision 1: 50 clusters ready")
    return body, ready.status


def test_the_fleet_status_stays_small_whatever_the_clusters_hold(distinct_digests: None) -> None:
    body, status = fleet_status(200)
    assert status["clusterSummary"] == "50/50" and len(status["clusters"]) == 50
    assert status["rollout"] == {"revision": 1, "groups": 10}
    stored = {key: value for key, value in body.items() if key != "status"}
    assert json_bytes(stored) + json_bytes(status) < ETCD_REQUEST_LIMIT - REQUEST_RESERVE
    # The objects of the clusters are not in it: at 1 object per cluster it is as large, but for
    # the digits of the counts ("200 objects" and "1 objects" in 50 lines).
    _, small = fleet_status(1)
    assert json_bytes(status) - json_bytes(small) == 50 * 2 * 2 + 50 * 2
    # Each cluster Application holds its own 200 objects, far within the limit too.
    child, own = cluster_application_status(200)
    assert json_bytes(child) + json_bytes(own) < ETCD_REQUEST_LIMIT - REQUEST_RESERVE
