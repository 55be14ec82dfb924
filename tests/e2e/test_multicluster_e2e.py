"""Delivery to other clusters (docs/multicluster.md): the operator runs against the hub (the full
control plane) and applies Applications to two spokes (minimal control planes, each its own etcd
and kube-apiserver) that their ClusterProfiles name through kubeconfig Secrets.

Each test makes its own ClusterProfiles (cluster-scoped, so named after the test's namespace)
and the namespace of the same name on the spoke; the operator's namespace, where the Secrets
live, is the test's namespace (``--operator-namespace``, as the harness starts it).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2ekit import (
    GROUP,
    VERSION,
    Kube,
    condition,
    configmap_component,
    dependency,
    deployment_component,
    install_crds,
    inventory,
)
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.devcluster import kubeconfig_secret
from tools.devcluster.pytest_plugin import api_client, control_plane, create_namespace_named, default_wait, wait_until

DOMAIN = "oam-operator.dev"


class Spoke:
    """One spoke as a test sees it: its API and the test's namespace there."""

    def __init__(self, handle: ClusterHandle, namespace: str) -> None:
        self.handle = handle
        self.namespace = namespace
        self.api = api_client(handle)
        self.core: Any = client.CoreV1Api(self.api)
        self.apps: Any = client.AppsV1Api(self.api)
        create_namespace_named(handle, namespace)

    @property
    def cluster_id(self) -> str:
        return str(self.core.read_namespace("kube-system").metadata.uid)

    def configmaps(self) -> dict[str, dict[str, str]]:
        """Name -> data of the owned ConfigMaps in the namespace."""
        return {cm.metadata.name: dict(cm.data or {}) for cm in self.core.list_namespaced_config_map(self.namespace).items
                if f"{DOMAIN}/owner-id" in (cm.metadata.annotations or {})}

    def owner_of(self, configmap: str) -> str:
        annotations = self.core.read_namespaced_config_map(configmap, self.namespace).metadata.annotations or {}
        return str(annotations[f"{DOMAIN}/owner-id"])

    def close(self) -> None:
        self.api.close()


@pytest.fixture
def spokes(spoke_clusters: list[ClusterHandle], kube: Kube) -> Iterator[list[Spoke]]:
    made = [Spoke(handle, kube.namespace) for handle in spoke_clusters]
    yield made
    for spoke in made:
        spoke.close()


@pytest.fixture
def profiles(kube: Kube) -> Iterator[list[str]]:
    """The ClusterProfiles a test made (deleted after it)."""
    made: list[str] = []
    yield made
    for name in made:
        try:
            kube.custom.delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", name)
        except ApiException as error:
            if error.status != 404:
                raise


def make_profile(kube: Kube, made: list[str], suffix: str, secret: str | None, **spec: Any) -> str:
    name = f"{kube.namespace}-{suffix}"
    if secret is not None:
        spec["kubeConfig"] = {"secretRef": {"name": secret}}
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": name}, "spec": spec})
    made.append(name)
    return name


def put_secret(kube: Kube, name: str, data: dict[str, bytes]) -> None:
    """Create or replace the Secret ``name`` in the operator's namespace."""
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": kube.namespace},
            "type": "Opaque", "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}
    try:
        kube.core.create_namespaced_secret(kube.namespace, body)
    except ApiException as error:
        if error.status != 409:
            raise
        kube.core.replace_namespaced_secret(name, kube.namespace, body)


def put_kubeconfig_secret(kube: Kube, name: str, spoke: Spoke) -> None:
    manifest = kubeconfig_secret(spoke.handle.kubeconfig, name, kube.namespace)
    put_secret(kube, name, {"value": base64.b64decode(manifest["data"]["value"])})


def message(app: dict[str, Any]) -> str:
    return str((condition(app, "Ready") or {}).get("message", ""))


def wait_message(kube: Kube, name: str, wanted: str, *, prefix: bool = False) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        app = kube.app_or_none(name)
        if app is None:
            return None
        text = message(app)
        return app if (text.startswith(wanted) if prefix else text == wanted) else None

    result: dict[str, Any] = wait_until(reached, default_wait(kube.cluster), f"Application {name} to say {wanted!r}")
    return result


def wait_profile_ready(kube: Kube, profile: str, status: str, reason: str, wanted: str, *,
                       prefix: bool = False) -> dict[str, Any]:
    """Wait until the ClusterProfile's own Ready condition (what ``kubectl describe clusterprofile``
    shows, docs/multicluster.md#the-clusterprofiles-status) says ``wanted``."""
    def reached() -> dict[str, Any] | None:
        body = kube.custom.get_cluster_custom_object(GROUP, VERSION, "clusterprofiles", profile)
        ready = condition(body, "Ready") or {}
        text = str(ready.get("message", ""))
        said = (ready.get("status"), ready.get("reason")) == (status, reason)
        return ready if said and (text.startswith(wanted) if prefix else text == wanted) else None

    result: dict[str, Any] = wait_until(reached, default_wait(kube.cluster), f"ClusterProfile {profile} to say {wanted!r}")
    return result


def hub_configmaps(kube: Kube) -> list[str]:
    return [name for kind, name in kube.owned() if kind == "ConfigMap"]


def make_available(spoke: Spoke, name: str) -> None:
    """What the Deployment controller would write once the Pods are up (a spoke runs no controllers)."""
    deployment = spoke.apps.read_namespaced_deployment(name, spoke.namespace)
    replicas = deployment.spec.replicas
    spoke.apps.patch_namespaced_deployment_status(name, spoke.namespace, {"status": {
        "observedGeneration": deployment.metadata.generation, "replicas": replicas, "updatedReplicas": replicas,
        "readyReplicas": replicas, "availableReplicas": replicas,
        "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                       {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}})


def test_waves_prune_and_deletion_happen_on_the_spoke(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                      profiles: list[str]) -> None:
    spoke = spokes[0]
    put_kubeconfig_secret(kube, "spoke-a", spoke)
    profile = make_profile(kube, profiles, "a", "spoke-a")
    start_operator(kube.namespace)
    components = [deployment_component("db"), configmap_component("web"), configmap_component("extra")]
    kube.apply_app("app", {"profile": profile, "components": components,
                           "policies": [dependency(("web", ["db"]), ("extra", ["db"]))]})

    # The first wave waits for the Deployment on the spoke to become Available.
    waiting = wait_message(kube, "app", "Waiting for bundle", prefix=True)
    assert waiting["status"]["state"] == "Processing"
    assert spoke.apps.read_namespaced_deployment("db", spoke.namespace) is not None
    assert spoke.configmaps() == {}
    make_available(spoke, "db")
    app = kube.wait_ready("app")

    assert app["status"]["cluster"] == spoke.cluster_id
    assert sorted(spoke.configmaps()) == ["extra", "web"]
    hub = kube.core.read_namespace("kube-system").metadata.uid  # the remote's id, then the hub's
    assert spoke.owner_of("web") == f"{spoke.cluster_id}@{hub}/{kube.namespace}/app"
    assert hub_configmaps(kube) == []  # nothing on the operator's own cluster
    assert {item["name"] for item in inventory(app)} == {"db", "web", "extra"}

    # Prune: a component taken out is deleted on the spoke.
    kube.apply_app("app", {"profile": profile, "components": components[:2],
                           "policies": [dependency(("web", ["db"]))]})
    kube.wait_ready("app")
    assert sorted(spoke.configmaps()) == ["web"]

    # Deletion: the spoke's objects go, then the Application.
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "app")
    wait_until(lambda: kube.app_or_none("app") is None, default_wait(kube.cluster), "the Application to be deleted")
    assert spoke.configmaps() == {}
    names = [d.metadata.name for d in spoke.apps.list_namespaced_deployment(spoke.namespace).items]
    assert names == []


def test_two_hubs_with_an_application_of_one_name_never_own_the_same_objects(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    """docs/multicluster.md#owner-id-on-the-remote-cluster: the second spoke plays a second hub
    (the CRDs, an operator of its own) with an Application of the same namespace and name for the
    first spoke. The owner ids there carry the hub's id, so the second hub meets an owner conflict
    instead of taking the first hub's objects, and deleting its Application deletes none of them."""
    target, other = spokes
    put_kubeconfig_secret(kube, "spoke-two-hubs", target)
    profile = make_profile(kube, profiles, "two-hubs", "spoke-two-hubs")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("web")]})
    kube.wait_ready("app")
    first_owner = target.owner_of("web")

    install_crds(other.handle)
    second = Kube(other.api, other.namespace, other.handle)
    put_kubeconfig_secret(second, "spoke-two-hubs", target)
    second_profiles: list[str] = []
    try:
        second_profile = make_profile(second, second_profiles, "two-hubs", "spoke-two-hubs")
        start_operator(other.namespace, kubeconfig=other.handle.kubeconfig)
        second.apply_app("app", {"profile": second_profile,
                                 "components": [configmap_component("web", {"key": "second hub"})]})
        app = second.wait_state("app", "Error", "OwnershipConflict")
        assert message(app) == (f"Owner conflict; object /v1, Kind=ConfigMap {target.namespace}/web is owned by "
                                f"{first_owner}")
        assert target.configmaps() == {"web": {"key": "web"}}

        second.custom.delete_namespaced_custom_object(GROUP, VERSION, second.namespace, "applications", "app")
        wait_until(lambda: second.app_or_none("app") is None, default_wait(other.handle), "the second hub's "
                   "Application to be deleted")
        assert target.configmaps() == {"web": {"key": "web"}}
        assert target.owner_of("web") == first_owner
    finally:
        for name in second_profiles:
            second.custom.delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", name)


def test_a_namespace_the_profile_does_not_allow_is_refused(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                           profiles: list[str]) -> None:
    put_kubeconfig_secret(kube, "spoke-a", spokes[0])
    profile = make_profile(kube, profiles, "a", "spoke-a", allowedNamespaces=["team-a", "team-c"])
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg")]})
    app = kube.wait_state("app", "Error", "NotPermitted")
    assert message(app) == (f"ClusterProfile {profile} does not allow Applications of namespace {kube.namespace} "
                            "(allowedNamespaces: team-a, team-c)")
    assert spokes[0].configmaps() == {} and hub_configmaps(kube) == []


def test_unusable_kubeconfig_secrets_are_refused_until_fixed(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                             profiles: list[str]) -> None:
    spoke = spokes[1]
    profile = make_profile(kube, profiles, "b", "spoke-b")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg")]})
    where = f'ClusterProfile {profile}: Secret {kube.namespace}/spoke-b key "value"'

    app = kube.wait_state("app", "Error", "ClusterUnusable")
    missing = f"ClusterProfile {profile}: kubeconfig Secret {kube.namespace}/spoke-b not found"
    assert message(app) == missing
    wait_profile_ready(kube, profile, "False", "ClusterUnusable", missing)

    put_secret(kube, "spoke-b", {"config": b"x"})
    no_key = f'ClusterProfile {profile}: Secret {kube.namespace}/spoke-b has no key "value" (its keys: config)'
    wait_message(kube, "app", no_key)
    wait_profile_ready(kube, profile, "False", "ClusterUnusable", no_key)

    put_secret(kube, "spoke-b", {"value": b"clusters: [unclosed\n"})
    wait_message(kube, "app", f"{where} is not a kubeconfig: while parsing a flow sequence", prefix=True)
    wait_profile_ready(kube, profile, "False", "ClusterUnusable",
                       f"{where} is not a kubeconfig: while parsing a flow sequence", prefix=True)

    document = json.loads(Path(spoke.handle.kubeconfig).read_text(encoding="utf-8"))
    del document["current-context"]
    put_secret(kube, "spoke-b", {"value": json.dumps(document).encode()})
    app = wait_message(kube, "app", f"{where}: the kubeconfig names no current-context")
    assert app["status"]["state"] == "Error"
    wait_profile_ready(kube, profile, "False", "ClusterUnusable", f"{where}: the kubeconfig names no current-context")
    assert spoke.configmaps() == {} and hub_configmaps(kube) == []

    put_kubeconfig_secret(kube, "spoke-b", spoke)
    kube.wait_ready("app")
    assert sorted(spoke.configmaps()) == ["cfg"]
    wait_profile_ready(kube, profile, "True", "Connected",
                       f"connected to cluster {spoke.handle.server} (id {spoke.cluster_id})")


def test_refused_credentials_then_a_rotated_secret_reconnect_without_a_restart(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    spoke = spokes[0]
    document = json.loads(Path(spoke.handle.kubeconfig).read_text(encoding="utf-8"))
    good = json.dumps(document).encode()
    document["users"][0]["user"] = {"token": "not-a-valid-token"}
    put_secret(kube, "spoke-a", {"value": json.dumps(document).encode()})
    profile = make_profile(kube, profiles, "a", "spoke-a")
    operator = start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg")]})

    label = f"Cluster {spoke.handle.server} (ClusterProfile {profile}): 401 Unauthorized"
    app = wait_message(kube, "app", label, prefix=True)
    assert app["status"]["state"] == "Pending"
    assert condition(app, "Ready")["reason"] == "Retrying"
    assert spoke.configmaps() == {} and hub_configmaps(kube) == []

    put_secret(kube, "spoke-a", {"value": good})
    app = kube.wait_ready("app")
    assert operator.process.poll() is None  # the same process: no restart
    assert app["status"]["cluster"] == spoke.cluster_id
    assert sorted(spoke.configmaps()) == ["cfg"]


def test_an_unreachable_spoke_loses_nothing_and_deletion_waits_for_it(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    spoke = spokes[1]
    plane = control_plane(spoke.handle)
    put_kubeconfig_secret(kube, "spoke-b", spoke)
    profile = make_profile(kube, profiles, "b", "spoke-b")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg", {"v": "1"})]})
    kube.wait_ready("app")
    label = f"Cluster {spoke.handle.server} (ClusterProfile {profile}): "

    plane.stop_component("kube-apiserver", grace=0)
    try:
        kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg", {"v": "2"})]})
        app = wait_message(kube, "app", label, prefix=True)
        assert "connection error" in message(app)
        assert app["status"]["state"] == "Pending" and condition(app, "Ready")["reason"] == "Retrying"
        assert [item["name"] for item in inventory(app)] == ["cfg"]  # nothing forgotten
        assert hub_configmaps(kube) == []
    finally:
        plane.start_component("kube-apiserver")
    kube.wait_ready("app")
    assert spoke.configmaps() == {"cfg": {"v": "2"}}

    plane.stop_component("kube-apiserver", grace=0)
    try:
        kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "app")
        app = wait_message(kube, "app", label, prefix=True)
        assert "connection error" in message(app)
        assert app["status"]["state"] == "DeletionPending"
        assert condition(app, "Ready")["reason"] == "DeletionRetrying"
    finally:
        plane.start_component("kube-apiserver")
    wait_until(lambda: kube.app_or_none("app") is None, default_wait(kube.cluster), "the Application to be deleted")
    assert spoke.configmaps() == {}


def test_a_profile_switched_to_another_cluster_is_refused_not_orphaned(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    first, second = spokes
    put_kubeconfig_secret(kube, "spoke-a", first)
    profile = make_profile(kube, profiles, "a", "spoke-a")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg")]})
    kube.wait_ready("app")

    put_kubeconfig_secret(kube, "spoke-a", second)  # the Secret now reaches the other spoke
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg", {"v": "2"})]})
    app = kube.wait_state("app", "Error", "ClusterSwitched")
    assert message(app) == (f"ClusterProfile {profile} now delivers to cluster {second.cluster_id}, but this "
                            f"Application's objects are on {first.cluster_id}: point the profile back, or delete "
                            "the Application to delete them there")
    assert second.configmaps() == {}
    assert sorted(first.configmaps()) == ["cfg"]

    put_kubeconfig_secret(kube, "spoke-a", first)
    kube.wait_ready("app")
    assert first.configmaps() == {"cfg": {"v": "2"}}


def test_applications_on_two_spokes_and_an_app_dependency_across_clusters(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    put_kubeconfig_secret(kube, "spoke-a", spokes[0])
    put_kubeconfig_secret(kube, "spoke-b", spokes[1])
    profile_a = make_profile(kube, profiles, "a", "spoke-a")
    profile_b = make_profile(kube, profiles, "b", "spoke-b")
    start_operator(kube.namespace)
    # a-0 waits for its Deployment on spoke-a; b-0 on spoke-b waits for a-0.
    kube.apply_app("a-0", {"profile": profile_a, "components": [deployment_component("db")]})
    for index in (1, 2):
        kube.apply_app(f"a-{index}", {"profile": profile_a, "components": [configmap_component(f"a-{index}")]})
    kube.apply_app("b-0", {"profile": profile_b, "components": [configmap_component("b-0")], "policies": [
        {"name": "after-a", "type": "app-dependency", "properties": {"applications": [{"name": "a-0"}]}}]})
    kube.wait_state("b-0", "Waiting", "DependenciesNotReady")
    assert spokes[1].configmaps() == {}
    wait_until(lambda: spokes[0].apps.list_namespaced_deployment(spokes[0].namespace).items, default_wait(kube.cluster),
               "the Deployment of a-0 on spoke-a")
    make_available(spokes[0], "db")
    for name in ("a-0", "a-1", "a-2", "b-0"):
        kube.wait_ready(name)
    assert sorted(spokes[0].configmaps()) == ["a-1", "a-2"]
    assert sorted(spokes[1].configmaps()) == ["b-0"]
    assert hub_configmaps(kube) == []


def test_drift_on_the_spoke_is_corrected_from_its_watch(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                         profiles: list[str]) -> None:
    spoke = spokes[0]
    put_kubeconfig_secret(kube, "spoke-a", spoke)
    profile = make_profile(kube, profiles, "a", "spoke-a")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg", {"v": "1"})]})
    kube.wait_ready("app")
    wait = default_wait(kube.cluster)

    spoke.core.patch_namespaced_config_map("cfg", spoke.namespace, {"data": {"v": "evil"}},
                                           field_manager="kubectl-edit")
    wait_until(lambda: spoke.configmaps().get("cfg") == {"v": "1"}, wait, "the drifted data to be corrected")
    # Only a watch finds drift before the reapply interval (60m), and only the drift path posts this Event.
    wait_until(lambda: kube.event_messages("app", "DriftCorrected"), wait, "the DriftCorrected Event on the hub")
    assert kube.event_messages("app", "DriftCorrected") == ["Corrected drift: ConfigMap cfg (data.v)"]


def test_the_service_account_is_impersonated_on_the_spoke(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                          profiles: list[str]) -> None:
    spoke = spokes[1]
    put_kubeconfig_secret(kube, "spoke-b", spoke)
    profile = make_profile(kube, profiles, "b", "spoke-b")
    start_operator(kube.namespace, "--no-use-operator-identity")
    spoke.core.create_namespaced_service_account(spoke.namespace, {"metadata": {"name": "deployer"}})
    # Its error retries run every 10 minutes: Ready within the test's wait is the grant's wake-up.
    slow_retries = {"name": "slow-retries", "type": "reconciliation", "properties": {"retryInterval": "10m"}}
    kube.apply_app("tenant", {"profile": profile, "serviceAccountName": "deployer",
                              "components": [configmap_component("cfg")], "policies": [slow_retries]})

    app = kube.wait_state("tenant", "Error", "NotPermitted")  # the spoke's RBAC refuses the account
    ns = kube.namespace
    assert message(app) == (
        f"Cluster {spoke.handle.server} (ClusterProfile {profile}): ServiceAccount {ns}/deployer may not get, "
        f"list, create, update, patch, delete configmaps in namespace {ns}; the Application's objects need it. "
        f"`oam-operator rbac tenant -n {ns}` prints a Role and RoleBinding that grant it")
    assert spoke.configmaps() == {}

    rbac: Any = client.RbacAuthorizationV1Api(spoke.api)  # granted on the spoke only
    rbac.create_namespaced_role(spoke.namespace, {
        "metadata": {"name": "deployer"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                   "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(spoke.namespace, {
        "metadata": {"name": "deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": spoke.namespace}]})
    kube.wait_ready("tenant")  # woken by the spoke's watch of Roles and RoleBindings
    assert sorted(spoke.configmaps()) == ["cfg"] and hub_configmaps(kube) == []


def test_the_abandon_annotation_releases_an_application_whose_spoke_is_down(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    spoke = spokes[0]
    plane = control_plane(spoke.handle)
    put_kubeconfig_secret(kube, "spoke-a", spoke)
    profile = make_profile(kube, profiles, "a", "spoke-a")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("kept")]})
    kube.wait_ready("app")

    plane.stop_component("kube-apiserver", grace=0)
    try:
        kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "app")
        app = wait_message(kube, "app", f"Cluster {spoke.handle.server} (ClusterProfile {profile}): ", prefix=True)
        assert app["status"]["state"] == "DeletionPending"
        kube.custom.patch_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "app", {
            "metadata": {"annotations": {f"{DOMAIN}/abandon": "true"}}})
        wait_until(lambda: kube.app_or_none("app") is None, default_wait(kube.cluster), "the Application to go")
    finally:
        plane.start_component("kube-apiserver")
    assert sorted(spoke.configmaps()) == ["kept"]  # left in place on the spoke


def run_diff(kube: Kube, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env.pop("OAM_OPERATOR_OPERATOR_NAMESPACE", None)  # the flag names where the profile's Secret is
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), "diff", *args, "-n", kube.namespace,
                           "--kubeconfig", kube.cluster.kubeconfig, "--operator-namespace", kube.namespace],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def test_diff_compares_with_the_spoke_and_names_it(start_operator: Any, kube: Kube, spokes: list[Spoke],
                                                   profiles: list[str]) -> None:
    spoke = spokes[0]
    put_kubeconfig_secret(kube, "spoke-d", spoke)
    profile = make_profile(kube, profiles, "d", "spoke-d")
    start_operator(kube.namespace)
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("web")], "drift": "Report"})
    kube.wait_ready("app")
    named = f"Compared with cluster {spoke.handle.server} (ClusterProfile {profile})\n"

    result = run_diff(kube, "app")
    assert (result.returncode, result.stdout, result.stderr) == (0, named + "no changes\n", "")

    spoke.core.patch_namespaced_config_map("web", spoke.namespace, {"data": {"key": "edited"}})
    result = run_diff(kube, "app")
    assert (result.returncode, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    assert lines[:3] == [named.rstrip("\n"), "Wave app:", f"  change ConfigMap {kube.namespace}/web"]
    assert "    -  key: edited" in lines and "    +  key: web" in lines
    assert spoke.core.read_namespaced_config_map("web", spoke.namespace).data == {"key": "edited"}  # dry run only

    kube.core.delete_namespaced_secret("spoke-d", kube.namespace)
    result = run_diff(kube, "app")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"Error: ClusterProfile {profile}: kubeconfig Secret {kube.namespace}/spoke-d not found\n"
