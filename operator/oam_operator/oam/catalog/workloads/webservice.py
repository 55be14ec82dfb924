"""The ``webservice`` component (docs/transform.md#workload-components): a Deployment behind a ClusterIP Service.

Objects, in order: ``Deployment C``, ``Service C`` (port ``http``), ``ServiceAccount C``, the
claims of ``pvc`` volumes. Routing traits reach it on ``port`` through ``Service C``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.workloads.deployment import deployment
from oam_operator.oam.catalog.workloads.schemas import common_schema, replicas_schema, topology_spread_schema
from oam_operator.oam.catalog.workloads.values import opt_bool, opt_int
from oam_operator.oam.catalog.workloads.workload import (
    Workload,
    WorkloadOptions,
    container_port,
    parse_workload,
    require_image,
    service,
    service_port,
)
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

PORT_NAME = "http"
DEFAULT_PORT = 80
DEFAULT_REPLICAS = 1


class WebserviceConfig:
    def __init__(self, workload: Workload, port: int, replicas: int, spread: bool) -> None:
        self.workload = workload
        self.port = port
        self.replicas = replicas
        self.spread = spread

    def generate(self, app: TreeApplication) -> list[Object]:
        w = self.workload
        spec = {"type": "ClusterIP", "selector": w.labels(), "ports": [service_port(PORT_NAME, self.port)]}
        return [
            deployment(w, self.replicas, self.spread, [container_port(PORT_NAME, self.port)]),
            service(w.name, w.namespace, w.labels(), spec),
            w.service_account(),
            *w.claims(),
        ]

    def service_port(self) -> int:
        return self.port

    def backend_service_name(self) -> str:
        return self.workload.name


@component("webservice")
class WebserviceHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            **common_schema(sidecars=True, affinity=True),
            "port": PropertySchema(
                type="integer", default=DEFAULT_PORT, description="Container and Service port (named http)."
            ),
            "replicas": replicas_schema(),
            "topologySpread": topology_spread_schema(),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> WebserviceConfig:
        props = component.properties
        require_image(props)
        port = opt_int(props, "port", DEFAULT_PORT)
        replicas = opt_int(props, "replicas", DEFAULT_REPLICAS)
        spread = opt_bool(props, "topologySpread", True)
        options = WorkloadOptions(port_name=PORT_NAME, sidecars=True, affinity=True)
        return WebserviceConfig(parse_workload(component, namespace, options), port, replicas, spread)
