"""The ``worker`` component (docs/transform.md#workload-components): a Deployment without a Service.

Objects, in order: ``Deployment C``, ``ServiceAccount C``, the claims of ``pvc`` volumes. It
declares no container port, so probes and hooks must use numeric ports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.workloads.deployment import deployment
from oam_operator.oam.catalog.workloads.schemas import common_schema, replicas_schema, topology_spread_schema
from oam_operator.oam.catalog.workloads.values import opt_bool, opt_int
from oam_operator.oam.catalog.workloads.workload import Workload, WorkloadOptions, parse_workload, require_image
from oam_operator.oam.document.document import Component
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

DEFAULT_REPLICAS = 1


class WorkerConfig:
    def __init__(self, workload: Workload, replicas: int, spread: bool) -> None:
        self.workload = workload
        self.replicas = replicas
        self.spread = spread

    def generate(self, app: TreeApplication) -> list[Object]:
        w = self.workload
        return [deployment(w, self.replicas, self.spread), w.service_account(), *w.claims()]

    def service_port(self) -> int:
        return 0


@component("worker")
class WorkerHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            **common_schema(sidecars=True, affinity=True),
            "replicas": replicas_schema(),
            "topologySpread": topology_spread_schema(),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> WorkerConfig:
        props = component.properties
        require_image(props)
        replicas = opt_int(props, "replicas", DEFAULT_REPLICAS)
        spread = opt_bool(props, "topologySpread", True)
        options = WorkloadOptions(port_name=None, sidecars=True, affinity=True)
        return WorkerConfig(parse_workload(component, namespace, options), replicas, spread)
