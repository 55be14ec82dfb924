"""``make demo-multi``: the spoke of the two-cluster demo (docs/multicluster.md).

The hub is ``make demo``'s control plane; the spoke is a second full control plane of this
checkout (``<demo name>-spoke``: kwok runs its Pods, so the shop becomes Ready there). The hub
gets what a platform team would add: the spoke's kubeconfig in a Secret of the operator's
namespace and a ClusterProfile naming it; the example's Applications are pointed at that profile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.devcluster import devcluster as dc

OPERATOR_NAMESPACE = "oam-system"  # the README's `helm install` namespace
NAMESPACE = "shop-spoke"  # the Applications' namespace: not make demo's `shop`, so both demos run side by side
SECRET = "demo-spoke-kubeconfig"
PROFILE = "demo-spoke"


def spoke_name(hub: str) -> str:
    return f"{hub}-spoke"


def ensure_spoke(hub: str) -> dc.ControlPlane:
    """The running spoke of ``hub``, started (detached) if it is not."""
    name = spoke_name(hub)
    try:
        plane = dc.attach(name)
        if all(dc.component_alive(c) for c in plane.components):
            print(f"reusing the running spoke control plane '{name}'", flush=True)
            return plane
        plane.stop()
    except dc.DevclusterError:
        pass
    print(f"starting the spoke: a second full local control plane '{name}'", flush=True)
    run = dc.cli_run_dir(name)
    run.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return dc.start("full", name=name, run_dir=run, detached=True)


def attached_spoke(hub: str) -> dc.ControlPlane | None:
    try:
        return dc.attach(spoke_name(hub))
    except dc.DevclusterError:
        return None


def connection(spoke_kubeconfig: str) -> list[dict[str, Any]]:
    """The hub's objects that reach the spoke: the operator's namespace, the kubeconfig Secret
    in it and the ClusterProfile naming the Secret."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}},
        dc.kubeconfig_secret(spoke_kubeconfig, SECRET, OPERATOR_NAMESPACE),
        {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": PROFILE},
         "spec": {"kubeConfig": {"secretRef": {"name": SECRET}}}},
    ]


def pointed_at_spoke(example: Path) -> list[dict[str, Any]]:
    """The example's documents, each Application's ``spec.profile`` set to the spoke's profile."""
    import yaml

    documents = [d for d in yaml.safe_load_all(example.read_text(encoding="utf-8")) if d]
    for document in documents:
        if document.get("kind") == "Application":
            document.setdefault("spec", {})["profile"] = PROFILE
    return documents
