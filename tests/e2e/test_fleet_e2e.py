"""One Application to the clusters a topology policy selects (docs/multicluster.md#topology): the
operator on the hub (the full control plane), two spokes (minimal control planes) reached through
ClusterProfiles whose labels the test changes; the rollout test has four spokes and the hub itself
as a fifth cluster, and counts the writes each spoke received in its audit log.

The ClusterProfiles are cluster-scoped, so named after the test's namespace; the spokes get a
namespace of the same name; the operator's namespace, where the kubeconfig Secrets live, is the
test's namespace.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from e2ekit import GROUP, VERSION, Kube, condition, configmap_component, deployment_component
from test_multicluster_e2e import (
    Spoke,
    make_available,
    message,
    profiles,
    put_kubeconfig_secret,
    spokes,
    wait_message,
)

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import audit_log, control_plane, default_wait, wait_until

__all__ = ["profiles", "spokes"]  # the fixtures this module uses from the multicluster tests

DOMAIN = "oam-operator.dev"
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


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


def settings_on(spoke: Spoke) -> dict[str, str] | None:
    """The data of the ConfigMap ``settings`` on ``spoke`` (``None``: not there)."""
    found = spoke.core.list_namespaced_config_map(spoke.namespace, field_selector="metadata.name=settings").items
    return dict(found[0].data or {}) if found else None


def deployments_on(spoke: Spoke) -> list[str]:
    return [d.metadata.name for d in spoke.apps.list_namespaced_deployment(spoke.namespace).items]


class Audit:
    """The operator's successful writes a spoke's API server recorded in the test's namespace,
    read from its audit log (docs/devcluster.md#hub-and-spokes); ``mark`` and ``since`` count from
    a point of the test."""

    def __init__(self, spoke: Spoke) -> None:
        self.path = audit_log(spoke.handle)
        self.namespace = spoke.namespace

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, offset: int) -> list[tuple[str, str, str]]:
        """(verb, resource, name) of each write after ``offset``."""
        writes = []
        with self.path.open("rb") as log:
            log.seek(offset)
            for line in log.read().decode(errors="replace").splitlines():
                event = json.loads(line)
                ref = event.get("objectRef") or {}
                code = (event.get("responseStatus") or {}).get("code", 0)
                if (ref.get("namespace") == self.namespace and event.get("verb") in WRITES and 200 <= code < 300
                        and str(event.get("userAgent") or "").startswith("oam-operator/")
                        and event.get("stage") == "ResponseComplete"):
                    writes.append((str(event["verb"]), str(ref.get("resource")), str(ref.get("name"))))
        return writes


def rollout_spec(version: str, *, with_db: bool = False, override_on: str = "", timeout: str = "10s"
                 ) -> dict[str, Any]:
    """Revision ``version`` of the fleet: the ConfigMap ``settings`` says it (``with_db``: and a
    Deployment no controller of a spoke makes Available: the test holds a group until it makes
    it so), one cluster by ring label at a time, each cluster Application out of time after
    ``timeout``."""
    components = [configmap_component("settings", {"version": version})]
    if with_db:
        components.append(deployment_component("db"))
    override = {"name": "second", "type": "override", "properties": {"clusters": [override_on], "components": [
        {"name": "settings", "properties": {"object": {"data": {"cluster": "second"}}}}]}}
    return {"timeout": timeout, "components": components, "policies": [
        topology({"matchLabels": {"fleet": "rollout"}}),
        {"name": "slowly", "type": "rollout", "properties": {"maxConcurrent": 1, "orderBy": "ring"}}, override]}


def take(spoke: Spoke, kube: Kube) -> None:
    """Let the group of ``spoke`` through: its Deployment, once written, made Available."""
    wait_until(lambda: deployments_on(spoke) == ["db"], default_wait(kube.cluster), f"db on {spoke.handle.name}")
    make_available(spoke, "db")


def generations(kube: Kube, names: list[str]) -> dict[str, int]:
    """Name -> metadata.generation of the cluster Applications: one more per spec written."""
    return {name: int(kube.app(name)["metadata"]["generation"]) for name in names}


@pytest.fixture
def fleet_spokes(four_spokes: list[ClusterHandle], kube: Kube) -> Iterator[list[Spoke]]:
    made = [Spoke(handle, kube.namespace) for handle in four_spokes]
    yield made
    for spoke in made:
        spoke.close()


def test_a_rollout_to_four_spokes_halts_reverts_resumes_and_never_writes_ahead(
        start_operator: Any, kube: Kube, fleet_spokes: list[Spoke], profiles: list[str]) -> None:
    """Issue 39 item 6 on a hub and four spokes, step by step (docs/multicluster.md#rollout)."""
    spokes = fleet_spokes
    audits = [Audit(spoke) for spoke in spokes]
    names = []
    for ring, spoke in enumerate(spokes, start=1):
        put_kubeconfig_secret(kube, f"spoke-{ring}", spoke)
        names.append(labelled_profile(kube, profiles, f"s{ring}", f"spoke-{ring}", fleet="rollout", ring=str(ring)))
    p1, p2, p3 = names[:3]
    apps = [f"shop-{name}" for name in names]
    operator = start_operator(kube.namespace)

    # Revision 1 Ready on all four, one at a time; the override is visible on the second only.
    kube.apply_app("shop", rollout_spec("1", override_on=p2))
    ready = wait_clusters(kube, "shop", "4/4")
    assert message(ready) == "Applied revision 1: 4 clusters ready"
    assert ready["status"]["rollout"] == {"revision": 1, "groups": 4}
    assert [settings_on(spoke) for spoke in spokes] == [
        {"version": "1"}, {"version": "1", "cluster": "second"}, {"version": "1"}, {"version": "1"}]

    # Revision 2 cannot become Ready on the second spoke: its Deployment is made Available on the
    # first only (a spoke runs no controllers; the test plays the first one's). The second fails at
    # its timeout, the rollout halts there, the third and fourth get no write of it, and the first
    # two run revision 1 again within the timeout and 30 s.
    marks = [audit.mark() for audit in audits]
    kube.apply_app("shop", rollout_spec("2", with_db=True, override_on=p2))
    take(spokes[0], kube)
    wait_until(lambda: deployments_on(spokes[1]) == ["db"], default_wait(kube.cluster), "the second group to take it")
    reached = time.monotonic()
    rolling = wait_message(kube, "shop", f"Rolling out revision 2: group 2 of 4 ({p2})")
    assert (rolling["status"]["state"], condition(rolling, "Ready")["reason"]) == ("Processing", "Processing")
    back = {"version": "1"}
    wait_until(lambda: (settings_on(spokes[0]), settings_on(spokes[1])) == (back, {**back, "cluster": "second"})
               and deployments_on(spokes[0]) == deployments_on(spokes[1]) == [],
               10 + 30 - (time.monotonic() - reached), "the first two spokes to run revision 1 again within the "
               "timeout and 30 s of the second taking revision 2")
    halted = wait_message(kube, "shop", f"Rollout of revision 2 halted: cluster {p2} failed: ", prefix=True)
    assert message(halted) == (
        f"Rollout of revision 2 halted: cluster {p2} failed: Reconciliation timed out after 10s: Waiting for bundle "
        f"shop-{p2} (1/2 ready): Deployment db (Replicas: 0/1); reverted {p1} to revision 1; reverted {p2} to "
        "revision 1")
    assert (halted["status"]["state"], condition(halted, "Ready")["reason"]) == ("Error", "RolloutHalted")
    assert halted["status"]["rollout"]["halted"] == p2
    assert audits[2].since(marks[2]) == [] and audits[3].since(marks[3]) == []
    lines = {line["name"]: line for line in kube.app("shop")["status"]["clusters"]}
    assert [lines[name]["fleetRevision"] for name in names] == [1, 1, 1, 1]
    assert [settings_on(spoke) for spoke in spokes[2:]] == [back, back]

    # A fixed revision rolls out to all four; then a fifth profile (no kubeconfig: the hub itself)
    # labelled in gets the Application, and no other cluster sees a write.
    kube.apply_app("shop", rollout_spec("3", override_on=p2))
    wait_clusters(kube, "shop", "4/4")
    assert message(kube.app("shop")) == "Applied revision 3: 4 clusters ready"
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile",
        "metadata": {"name": f"{kube.namespace}-hub", "labels": {"ring": "5"}}, "spec": {}})
    p5 = f"{kube.namespace}-hub"
    profiles.append(p5)
    apps.append(f"shop-{p5}")
    marks, before = [audit.mark() for audit in audits], generations(kube, apps[:4])
    relabel(kube, p5, fleet="rollout")
    five = wait_clusters(kube, "shop", "5/5")
    assert message(five) == "Applied revision 3: 5 clusters ready"
    assert [(kind, name) for kind, name in kube.owned() if kind == "ConfigMap"] == [("ConfigMap", "settings")]
    assert [audit.since(mark) for audit, mark in zip(audits, marks, strict=True)] == [[], [], [], []]
    assert generations(kube, apps[:4]) == before

    # The third spoke unreachable mid-rollout (stopped while the first group waits for the test):
    # its cluster Application retries, runs out of time, and fails the rollout; its objects are
    # still there once its API server is back.
    third = control_plane(spokes[2].handle)
    kube.apply_app("shop", rollout_spec("4", with_db=True, override_on=p2))
    wait_until(lambda: deployments_on(spokes[0]) == ["db"], default_wait(kube.cluster), "the first group to take it")
    third.stop_component("kube-apiserver", grace=0)  # at once: the first group's timeout runs meanwhile
    try:
        take(spokes[0], kube)
        take(spokes[1], kube)
        wait_message(kube, "shop", f"Rolling out revision 4: group 3 of 5 ({p3})")
        halted = wait_message(kube, "shop", f"Rollout of revision 4 halted: cluster {p3} failed: ", prefix=True)
        said = message(halted)
        assert said.endswith(f"; reverted {p1} to revision 3; reverted {p2} to revision 3; "
                             f"reverted {p3} to revision 3"), said
        assert f"failed: Cluster {spokes[2].handle.server} (ClusterProfile {p3}): " in said, said
        assert "connection error: " in said.split("; reverted")[0], said  # its reason, not cut off
        assert (halted["status"]["state"], halted["status"]["rollout"]["halted"]) == ("Error", p3)
    finally:
        third.start_component("kube-apiserver")
    wait_until(lambda: settings_on(spokes[2]) == {"version": "3"}, default_wait(kube.cluster),
               "the third spoke's objects, as they were")
    assert [verb for verb, _, _ in audits[2].since(0) if verb == "delete"] == []
    wait_until(lambda: [settings_on(spoke) for spoke in spokes] == [
        {"version": "3"}, {"version": "3", "cluster": "second"}, {"version": "3"}, {"version": "3"}]
        and [deployments_on(spoke) for spoke in spokes] == [[], [], [], []],
        default_wait(kube.cluster), "every spoke to run revision 3")

    # The operator killed mid-rollout (the second group waiting for the test) resumes the same
    # rollout: no cluster skipped, none written twice. A long timeout: the kill must not fail it.
    marks, before = [audit.mark() for audit in audits], generations(kube, apps)
    fifth = rollout_spec("5", with_db=True, override_on=p2, timeout="2m")
    kube.apply_app("shop", fifth)
    take(spokes[0], kube)
    wait_until(lambda: deployments_on(spokes[1]) == ["db"], default_wait(kube.cluster), "the second group to take it")
    operator.kill()
    start_operator(kube.namespace, "--no-leader-election")  # no wait for the killed one's Lease
    for spoke in spokes[1:]:
        take(spoke, kube)
    done = wait_clusters(kube, "shop", "5/5")
    assert message(done) == "Applied revision 5: 5 clusters ready"
    assert done["status"]["rollout"] == {"revision": 5, "groups": 5}
    assert [(settings_on(spoke) or {}).get("version") for spoke in spokes] == ["5"] * 4
    assert generations(kube, apps) == {name: generation + 1 for name, generation in before.items()}
    written = [sorted(audit.since(mark)) for audit, mark in zip(audits, marks, strict=True)]
    assert written == [[("patch", "configmaps", "settings"), ("patch", "deployments", "db")]] * 4, written

    # A bad topology (spec.profile beside it) is refused and changes nothing applied anywhere.
    marks, before = [audit.mark() for audit in audits], generations(kube, apps)
    kube.apply_app("shop", {**fifth, "profile": p1})
    refused = kube.wait_state("shop", "Error", "TransformFailed")
    assert message(refused) == ('policy "fleet": a topology policy chooses the clusters, and spec.profile is set '
                                "too; set one of them")
    assert generations(kube, apps) == before
    assert [audit.since(mark) for audit, mark in zip(audits, marks, strict=True)] == [[], [], [], []]
