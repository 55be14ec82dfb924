"""The ``Deployment`` of ``webservice`` and ``worker`` (docs/transform.md#workload-components).

A claim that only one node can mount (ReadWriteOnce, ReadWriteOncePod) cannot be shared by
the old and the new pod of a rolling update, nor by two replicas: such a Deployment is
recreated instead of rolled, and more than one replica is refused when objects are generated.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.workloads.scheduling import topology_spread
from oam_operator.oam.catalog.workloads.workload import Workload
from oam_operator.oam.errors import GenerationError
from oam_operator.oam.formatting.gofmt import go_quote

Object = dict[str, Any]


def deployment(workload: Workload, replicas: int, spread: bool, ports: list[Object] | None = None) -> Object:
    strategy: Object = {}
    if workload.volumes.single_node_claim():
        if replicas > 1:
            raise GenerationError(
                f"deployment {go_quote(workload.name)}: non-RWX PVC requires replicas=1, got {replicas}"
            )
        strategy = {"type": "Recreate"}
    pod = workload.pod_spec(ports)
    constraints = topology_spread(workload.name, replicas, spread)
    if constraints:
        pod["topologySpreadConstraints"] = constraints
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": workload.metadata(),
        "spec": {
            "replicas": replicas,
            "selector": workload.selector(),
            "strategy": strategy,
            "template": workload.pod_template(pod),
        },
    }
