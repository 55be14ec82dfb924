"""Shards (controller/reconcile/sharding.py) with two operator processes on the full control plane: each
Application is reconciled by exactly one of them, chosen by its ``oam-operator.dev/shard``
label; a label no instance serves leaves the Application alone; relabelling moves it. The
objects carry their shard's label and each instance watches and caches only its own shard's
objects (docs/operator.md#watches-of-owned-objects)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2ekit import (
    DOMAIN,
    GROUP,
    VERSION,
    Kube,
    OperatorProcess,
    configmap_component,
    deployment_component,
    sleep_briefly,
)

from tools.devcluster.pytest_plugin import default_wait, wait_until

SHARD = f"{DOMAIN}/shard"


def apply_labelled(kube: Kube, name: str, labels: dict[str, str], data: str = "1",
                   components: list[dict[str, Any]] | None = None) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": kube.namespace, "labels": labels},
            "spec": {"components": components or [configmap_component(f"{name}-cm", {"v": data})]}}
    resource = kube.dynamic.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Application")
    resource.server_side_apply(body=body, namespace=kube.namespace, field_manager="e2e-user", force_conflicts=True)


def reconciled(operator: OperatorProcess) -> set[str]:
    """The Applications ``operator`` ran a pass for (its structured log)."""
    return {entry["name"] for entry in operator.logs() if entry.get("msg") == "pass finished"}


def test_each_application_is_reconciled_by_exactly_one_shard(start_operator: Any, kube: Kube) -> None:
    main = start_operator(kube.namespace)
    blue = start_operator(kube.namespace, "--shard", "blue")
    apply_labelled(kube, "plain", {})
    apply_labelled(kube, "sky", {SHARD: "blue"})
    apply_labelled(kube, "grass", {SHARD: "green"})  # no instance runs shard green
    kube.wait_ready("plain")
    kube.wait_ready("sky")
    sleep_briefly(3)

    assert reconciled(main) == {"plain"}
    assert reconciled(blue) == {"sky"}
    grass = kube.app("grass")
    assert not grass.get("status") and DOMAIN not in (grass["metadata"].get("finalizers") or [])
    assert kube.core.read_namespaced_config_map("sky-cm", kube.namespace).data == {"v": "1"}
    owned = {name for kind, name in kube.owned()}
    assert owned == {"plain-cm", "sky-cm"}

    # Relabelled into shard blue with a new spec: blue applies it, the main instance lets go.
    passes_of_main = len([e for e in main.logs() if e.get("msg") == "pass finished"])
    apply_labelled(kube, "plain", {SHARD: "blue"}, data="2")

    def moved() -> bool:
        cm = kube.core.read_namespaced_config_map("plain-cm", kube.namespace)
        return cm.data == {"v": "2"} and kube.ready("plain") is not None

    wait_until(moved, default_wait(kube.cluster), "shard blue to apply the relabelled Application")
    assert "plain" in reconciled(blue)
    assert object_labels(kube, "plain-cm")[SHARD] == "blue"  # re-stamped: in blue's watch now
    sleep_briefly(3)
    later = [e for e in main.logs() if e.get("msg") == "pass finished"][passes_of_main:]
    assert later == []

    # Deleting is the shard's work too: blue removes the finalizer and the objects.
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "sky")
    wait_until(lambda: kube.app_or_none("sky") is None, default_wait(kube.cluster), "sky to be deleted")
    assert {name for kind, name in kube.owned()} == {"plain-cm"}


def metric(operator: OperatorProcess, name: str) -> float:
    return operator.metrics()[(name, frozenset())]


def object_labels(kube: Kube, name: str) -> dict[str, str]:
    """The labels of the ConfigMap or Deployment ``name``."""
    if name.endswith("-web"):
        return dict(kube.apps.read_namespaced_deployment(name, kube.namespace).metadata.labels or {})
    return dict(kube.core.read_namespaced_config_map(name, kube.namespace).metadata.labels or {})


def diff(kube: Kube, name: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), "diff", name, "-n", kube.namespace,
                           "--kubeconfig", kube.cluster.kubeconfig],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def test_each_shard_watches_only_its_own_objects(start_operator: Any, kube: Kube) -> None:
    """Issue 23, point 5: the objects of shard s1's Application carry ``shard=s1``, the unsharded
    instance's none; each instance's watch cache holds exactly its own Application's objects
    (3 and 2; 5 each when every instance watched every object); a hand edit of s1's Deployment
    and the removal of the shard label from its ConfigMap are corrected by s1."""
    main = start_operator(kube.namespace)
    s1 = start_operator(kube.namespace, "--shard", "s1")
    apply_labelled(kube, "plain", {}, components=[
        deployment_component("plain-web"), configmap_component("plain-a"), configmap_component("plain-b")])
    apply_labelled(kube, "sky", {SHARD: "s1"}, components=[
        deployment_component("sky-web"), configmap_component("sky-cm")])
    kube.wait_ready("plain")
    kube.wait_ready("sky")
    wait = default_wait(kube.cluster)

    for name in ("plain-web", "plain-a", "plain-b"):
        assert SHARD not in object_labels(kube, name), name
    for name in ("sky-web", "sky-cm"):
        assert object_labels(kube, name)[SHARD] == "s1", name
    for name in ("plain", "sky"):  # the shard label is no difference to the preview
        result = diff(kube, name)
        assert (result.returncode, result.stdout, result.stderr) == (0, "no changes\n", ""), name

    # A hand edit of s1's Deployment: corrected from s1's watch, by s1.
    kube.apps.patch_namespaced_deployment("sky-web", kube.namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "main", "image": "evil/web:6.6.6"}]}}}}, field_manager="kubectl-set")

    def image() -> str:
        deployment = kube.apps.read_namespaced_deployment("sky-web", kube.namespace)
        return str(deployment.spec.template.spec.containers[0].image)

    wait_until(lambda: image() == "registry.invalid/app:1", wait, "s1 to correct the image")
    wait_until(lambda: metric(s1, "oam_operator_drift_corrections_total") == 1, wait, "s1 to count the correction")
    kube.wait_ready("sky")

    # A fresh measurement of each cache: a reconcile request makes a pass, which measures (at
    # most every 5 s: a measurement it skips is at most 5 s older, and still after all of the above).
    sleep_briefly(6)
    requested = "2026-11-29T12:00:00Z"
    for name in ("plain", "sky"):
        kube.custom.patch_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", name, {
            "metadata": {"annotations": {f"{DOMAIN}/requested-at": requested}}})
    for name in ("plain", "sky"):
        wait_until(lambda name=name: (kube.app(name).get("status") or {}).get("lastHandledReconcileAt") == requested
                   and kube.ready(name), wait, f"{name} to handle the reconcile request")

    def caches() -> tuple[float, float]:
        return metric(main, "oam_operator_watch_cache_objects"), metric(s1, "oam_operator_watch_cache_objects")

    wait_until(lambda: caches() == (3, 2), wait, "each cache to hold its own shard's objects")

    # The shard label taken off: the object leaves s1's watch (a deletion to it), and s1 puts it
    # back. (Meanwhile it matches the unsharded instance's selector, which sees it come and go.)
    kube.core.patch_namespaced_config_map("sky-cm", kube.namespace, [
        {"op": "remove", "path": f"/metadata/labels/{SHARD.replace('/', '~1')}"}], field_manager="kubectl-label")
    wait_until(lambda: object_labels(kube, "sky-cm").get(SHARD) == "s1", wait, "s1 to put its label back")
    wait_until(lambda: metric(s1, "oam_operator_drift_corrections_total") == 2, wait, "s1 to count the correction")
    kube.wait_ready("sky")
    assert metric(main, "oam_operator_drift_corrections_total") == 0
    assert reconciled(main) == {"plain"} and reconciled(s1) == {"sky"}
