"""One Application to the clusters a topology policy selects (docs/multicluster.md#topology): the
operator on the hub (the full control plane), two spokes (minimal control planes) reached through
ClusterProfiles whose labels the test changes.

The ClusterProfiles are cluster-scoped, so named after the test's namespace; the spokes get a
namespace of the same name; the operator's namespace, where the kubeconfig Secrets live, is the
test's namespace.
"""

from __future__ import annotations

from typing import Any

from e2ekit import GROUP, VERSION, Kube, configmap_component, deployment_component
from test_multicluster_e2e import Spoke, message, profiles, put_kubeconfig_secret, spokes, wait_message

from tools.devcluster.pytest_plugin import default_wait, wait_until

__all__ = ["profiles", "spokes"]  # the fixtures this module uses from the multicluster tests

DOMAIN = "oam-operator.dev"


def labelled_profile(kube: Kube, made: list[str], suffix: str, secret: str, **labels: str) -> str:
    name = f"{kube.namespace}-{suffix}"
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile",
        "metadata": {"name": name, "labels": labels}, "spec": {"kubeConfig": {"secretRef": {"name": secret}}}})
    made.append(name)
    return name


def relabel(kube: Kube, profile: str, **labels: str | None) -> None:
    kube.custom.patch_cluster_custom_object(GROUP, VERSION, "clusterprofiles", profile,
                                            {"metadata": {"labels": labels}})


def topology(selector: dict[str, Any], on_removal: str = "delete") -> dict[str, Any]:
    return {"name": "fleet", "type": "topology",
            "properties": {"clusterSelector": selector, "onRemoval": on_removal}}


def cluster_applications(kube: Kube, fleet_uid: str) -> list[str]:
    listed: Any = kube.custom.list_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications",
                                                      label_selector=f"{DOMAIN}/fleet={fleet_uid}")
    return sorted(item["metadata"]["name"] for item in listed["items"])


def versions(spoke: Spoke) -> dict[str, str]:
    """Name -> resourceVersion of the owned ConfigMaps on ``spoke``: unchanged means no write."""
    return {cm.metadata.name: cm.metadata.resource_version
            for cm in spoke.core.list_namespaced_config_map(spoke.namespace).items
            if f"{DOMAIN}/owner-id" in (cm.metadata.annotations or {})}


def wait_clusters(kube: Kube, name: str, summary: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        app = kube.app_or_none(name)
        if app is None:
            return None
        status = app.get("status") or {}
        return app if status.get("clusterSummary") == summary and status.get("state") == "Ready" else None

    found: dict[str, Any] = wait_until(reached, default_wait(kube.cluster), f"{name} to be Ready on {summary} clusters")
    return found


def test_a_topology_follows_the_profiles_labels(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                profiles: list[str]) -> None:
    first, second = spokes
    put_kubeconfig_secret(kube, "spoke-1", first)
    put_kubeconfig_secret(kube, "spoke-2", second)
    one = labelled_profile(kube, profiles, "one", "spoke-1", env="prod")
    two = labelled_profile(kube, profiles, "two", "spoke-2", env="test")
    start_operator(kube.namespace)
    # The second cluster's ConfigMap says so: an override for it alone.
    override = {"name": "second", "type": "override", "properties": {"clusters": [two], "components": [
        {"name": "settings", "properties": {"object": {"data": {"key": "second"}}}}]}}
    spec = {"components": [configmap_component("settings")],
            "policies": [topology({"matchLabels": {"env": "prod"}}), override]}
    kube.apply_app("shop", spec)

    # Only the selected profile's cluster gets the Application.
    app = wait_clusters(kube, "shop", "1/1")
    uid = app["metadata"]["uid"]
    assert message(app) == "Applied revision 1: 1 clusters ready"
    assert cluster_applications(kube, uid) == [f"shop-{one}"]
    (line,) = app["status"]["clusters"]
    assert (line["name"], line["application"], line["state"]) == (one, f"shop-{one}", "Ready")
    assert first.configmaps() == {"settings": {"key": "settings"}} and second.configmaps() == {}
    assert not [name for kind, name in kube.owned() if kind == "ConfigMap"]  # nothing on the hub itself
    child = kube.app(f"shop-{one}")
    assert child["spec"]["profile"] == one and child["metadata"]["ownerReferences"][0]["uid"] == uid

    # Labelled in: the second cluster gets it, the first sees no write.
    before = versions(first)
    relabel(kube, two, env="prod")
    wait_clusters(kube, "shop", "2/2")
    assert second.configmaps() == {"settings": {"key": "second"}}  # the override, there only
    assert versions(first) == before
    assert cluster_applications(kube, uid) == sorted([f"shop-{one}", f"shop-{two}"])

    # Labelled out: its cluster Application goes, and its objects on that cluster with it.
    relabel(kube, two, env="test")
    wait_clusters(kube, "shop", "1/1")
    wait_until(lambda: second.configmaps() == {}, default_wait(kube.cluster), "the second cluster's objects to go")
    assert versions(first) == before
    assert cluster_applications(kube, uid) == [f"shop-{one}"]

    # A selector that matches nothing waits and deletes nothing anywhere.
    kube.apply_app("shop", {**spec, "policies": [topology({"matchLabels": {"env": "none"}}), override]})
    waiting = wait_message(kube, "shop", 'No ClusterProfile is selected by the topology policy "fleet"')
    assert (waiting["status"]["state"], waiting["status"]["clusterSummary"]) == ("Waiting", "0/0")
    assert cluster_applications(kube, uid) == [f"shop-{one}"] and versions(first) == before

    # Orphan: a cluster that leaves the selection keeps its objects, no longer tracked.
    kube.apply_app("shop", {**spec, "policies": [topology({"matchLabels": {"env": "test"}}, "orphan"), override]})
    wait_clusters(kube, "shop", "1/1")
    wait_until(lambda: cluster_applications(kube, uid) == [f"shop-{two}"], default_wait(kube.cluster),
               "the first cluster's Application to go")
    assert versions(first) == before  # left in place
    assert second.configmaps() == {"settings": {"key": "second"}}

    # Deleting the fleet Application deletes its cluster Applications and their objects.
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "shop")
    wait_until(lambda: kube.app_or_none("shop") is None, default_wait(kube.cluster), "the Application to be deleted")
    assert cluster_applications(kube, uid) == [] and second.configmaps() == {}
    assert versions(first) == before


def test_a_bad_topology_changes_nothing_already_applied(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                      profiles: list[str]) -> None:
    first = spokes[0]
    put_kubeconfig_secret(kube, "spoke-1", first)
    one = labelled_profile(kube, profiles, "one", "spoke-1", env="prod")
    start_operator(kube.namespace)
    spec = {"components": [configmap_component("settings")],
            "policies": [topology({"matchLabels": {"env": "prod"}})]}
    kube.apply_app("shop", spec)
    uid = wait_clusters(kube, "shop", "1/1")["metadata"]["uid"]
    before = versions(first)
    kube.apply_app("shop", {**spec, "profile": one})
    refused = kube.wait_state("shop", "Error", "TransformFailed")
    assert message(refused) == ('policy "fleet": a topology policy chooses the clusters, and spec.profile is set '
                                "too; set one of them")
    assert cluster_applications(kube, uid) == [f"shop-{one}"] and versions(first) == before


def rollout_spec(data: str, *, with_db: bool = False) -> dict[str, Any]:
    components = [configmap_component("settings", {"version": data})]
    if with_db:
        components.append(deployment_component("db"))
    return {"timeout": "10s", "components": components, "policies": [
        topology({"matchLabels": {"fleet": "rollout"}}),
        {"name": "slowly", "type": "rollout", "properties": {"maxConcurrent": 1, "orderBy": "ring"}}]}


def settings_on(spoke: Spoke) -> str | None:
    found = spoke.core.list_namespaced_config_map(spoke.namespace, field_selector="metadata.name=settings").items
    return str(found[0].data["version"]) if found else None


def deployments_on(spoke: Spoke) -> list[str]:
    return [d.metadata.name for d in spoke.apps.list_namespaced_deployment(spoke.namespace).items]


def test_a_rollout_halts_at_the_failing_cluster_and_reverts_it(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                               profiles: list[str]) -> None:
    first, second = spokes
    put_kubeconfig_secret(kube, "spoke-1", first)
    put_kubeconfig_secret(kube, "spoke-2", second)
    one = labelled_profile(kube, profiles, "one", "spoke-1", fleet="rollout", ring="1")
    two = labelled_profile(kube, profiles, "two", "spoke-2", fleet="rollout", ring="2")
    operator = start_operator(kube.namespace)
    kube.apply_app("shop", rollout_spec("1"))
    ready = wait_clusters(kube, "shop", "2/2")
    assert ready["status"]["rollout"] == {"revision": 1, "groups": 2}
    assert (settings_on(first), settings_on(second)) == ("1", "1")
    untouched = versions(second)

    # Revision 2 needs a Deployment no controller makes Available on the spokes: the first group's
    # cluster times out (10 s), the rollout halts there, and the second cluster never sees it.
    kube.apply_app("shop", rollout_spec("2", with_db=True))
    halted = wait_message(kube, "shop", f"Rollout of revision 2 halted: cluster {one} failed: ", prefix=True)
    said = message(halted)
    assert said.endswith(f"; reverted {one} to revision 1"), said
    assert "Reconciliation timed out after 10s" in said
    assert (halted["status"]["state"], halted["status"]["rollout"]["halted"]) == ("Error", one)
    # The failed cluster runs revision 1 again: its ConfigMap as it was, the Deployment pruned.
    wait_until(lambda: settings_on(first) == "1" and deployments_on(first) == [], default_wait(kube.cluster),
               "the first cluster to run revision 1 again")
    assert versions(second) == untouched and deployments_on(second) == []
    lines = {line["name"]: line for line in kube.app("shop")["status"]["clusters"]}
    assert (lines[one]["fleetRevision"], lines[two]["fleetRevision"]) == (1, 1)

    # A fixed spec starts a new rollout, group by group. The operator killed once the first group
    # took it resumes the same rollout: no cluster skipped, none written twice.
    kube.apply_app("shop", rollout_spec("3"))
    wait_until(lambda: settings_on(first) == "3", default_wait(kube.cluster), "the first group to take revision 3")
    operator.kill()
    taken = versions(first)
    start_operator(kube.namespace, "--no-leader-election")  # no wait for the killed one's Lease
    done = wait_clusters(kube, "shop", "2/2")
    assert done["status"]["rollout"] == {"revision": 3, "groups": 2}
    assert message(done) == "Applied revision 3: 2 clusters ready"
    assert (settings_on(first), settings_on(second)) == ("3", "3")
    assert versions(first) == taken
