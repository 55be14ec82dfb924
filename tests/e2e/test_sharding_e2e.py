"""Shards (controller/sharding.py) with two operator processes on the full control plane: each
Application is reconciled by exactly one of them, chosen by its ``oam-operator.dev/shard``
label; a label no instance serves leaves the Application alone; relabelling moves it."""

from __future__ import annotations

from typing import Any

from e2ekit import DOMAIN, GROUP, VERSION, Kube, OperatorProcess, configmap_component, sleep_briefly

from tools.devcluster.pytest_plugin import default_wait, wait_until

SHARD = f"{DOMAIN}/shard"


def apply_labelled(kube: Kube, name: str, labels: dict[str, str], data: str = "1") -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": kube.namespace, "labels": labels},
            "spec": {"components": [configmap_component(f"{name}-cm", {"v": data})]}}
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
    sleep_briefly(3)
    later = [e for e in main.logs() if e.get("msg") == "pass finished"][passes_of_main:]
    assert later == []

    # Deleting is the shard's work too: blue removes the finalizer and the objects.
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "sky")
    wait_until(lambda: kube.app_or_none("sky") is None, default_wait(kube.cluster), "sky to be deleted")
    assert {name for kind, name in kube.owned()} == {"plain-cm"}
