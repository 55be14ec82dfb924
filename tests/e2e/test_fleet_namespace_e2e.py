"""A topology's target ``namespace`` (docs/multicluster.md#topology): the operator on the hub, one
spoke reached through a ClusterProfile. By default confinement refuses the objects outside the
Application's namespace and nothing is applied anywhere; with ``--allow-cross-namespace-objects``
the ConfigMap lands in the target namespace on the spoke (created there), and a changed target
moves it."""

from __future__ import annotations

from typing import Any

from e2ekit import Kube, configmap_component
from kubernetes.client.exceptions import ApiException
from test_fleet_e2e import cluster_applications, labelled_profile, wait_clusters
from test_multicluster_e2e import Spoke, hub_configmaps, message, profiles, put_kubeconfig_secret, run_diff, spokes

from tools.devcluster.pytest_plugin import default_wait, wait_until

__all__ = ["profiles", "spokes"]  # the fixtures this module uses from the multicluster tests


def fleet_spec(profile: str, namespace: str) -> dict[str, Any]:
    return {"components": [configmap_component("settings")],
            "policies": [{"name": "fleet", "type": "topology",
                          "properties": {"clusters": [profile], "namespace": namespace}}]}


def settings_in(spoke: Spoke, namespace: str) -> list[str]:
    """The namespaces' ConfigMaps named ``settings`` on ``spoke`` ([] when the namespace is not there)."""
    try:
        found = spoke.core.list_namespaced_config_map(namespace, field_selector="metadata.name=settings").items
    except ApiException as error:
        if error.status == 404:
            return []
        raise
    return [cm.metadata.name for cm in found]


def namespace_exists(spoke: Spoke, namespace: str) -> bool:
    try:
        spoke.core.read_namespace(namespace)
    except ApiException as error:
        if error.status == 404:
            return False
        raise
    return True


def wait_refused(kube: Kube, name: str) -> dict[str, Any]:
    """``name`` once it exists and is ``Error``/``InvalidObjects`` (a cluster Application is created by its fleet)."""
    def created() -> dict[str, Any] | None:
        return kube.app(name) if kube.app_or_none(name) is not None else None

    wait_until(created, default_wait(kube.cluster), f"{name} to be created")
    return kube.wait_state(name, "Error", "InvalidObjects")


def test_a_target_namespace_is_confined_by_default_and_delivered_when_allowed(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str]) -> None:
    spoke = spokes[0]
    target, moved = f"{kube.namespace}-b", f"{kube.namespace}-c"
    put_kubeconfig_secret(kube, "spoke-a", spoke)
    profile = labelled_profile(kube, profiles, "a", "spoke-a")
    try:
        # Confined: the cluster Application is refused with the reconciler's words, nothing applied.
        operator = start_operator(kube.namespace)
        kube.apply_app("shop", fleet_spec(profile, target))
        child = wait_refused(kube, f"shop-{profile}")
        words = (f"/v1, Kind=ConfigMap {target}/settings is in namespace {target}; "
                 f"only objects in namespace(s) {kube.namespace} are allowed")
        refusal = f"Object {words}"  # the status capitalises the reconciler's words
        assert message(child) == refusal
        assert child["metadata"]["annotations"]["oam-operator.dev/fleet-namespace"] == target
        fleet = kube.wait_state("shop", "Error", "ClusterFailed")
        assert message(fleet) == f"Cluster {profile} failed: {refusal}"
        assert not namespace_exists(spoke, target) and spoke.configmaps() == {} and hub_configmaps(kube) == []
        operator.stop()

        # Allowed: the target namespace is created on the spoke and the ConfigMap lands there only.
        start_operator(kube.namespace, "--allow-cross-namespace-objects")
        app = wait_clusters(kube, "shop", "1/1")
        assert settings_in(spoke, target) == ["settings"]
        assert spoke.configmaps() == {} and hub_configmaps(kube) == []
        # diff's preview confines to the Application's namespace whatever the operator allows.
        previewed = f"object {words}"
        result = run_diff(kube, f"shop-{profile}")
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"Error: {previewed}\n")
        result = run_diff(kube, "shop")
        assert (result.returncode, result.stdout.splitlines()[-1]) == (2, f"  Error: {previewed}")

        # A changed target moves the objects: the old one is pruned from the cluster Application's inventory.
        kube.apply_app("shop", fleet_spec(profile, moved))
        wait_until(lambda: settings_in(spoke, moved) == ["settings"] and settings_in(spoke, target) == [],
                   default_wait(kube.cluster), "the ConfigMap to move to the new target namespace")
        wait_clusters(kube, "shop", "1/1")
        assert cluster_applications(kube, app["metadata"]["uid"]) == [f"shop-{profile}"]
    finally:
        for namespace in (target, moved):  # created by the operator on the spoke
            try:
                spoke.core.delete_namespace(namespace)
            except ApiException as error:
                if error.status != 404:
                    raise
