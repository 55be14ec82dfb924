"""The ``daemonset`` component (docs/transform.md#workload-components): one pod per node, optionally behind a Service.

Objects, in order: ``DaemonSet C``, ``Service C`` (port ``http``, only when ``port`` > 0),
``ServiceAccount C``, the claims of ``pvc`` volumes. Node agents often must run on tainted
nodes too, hence ``tolerations``; replicas, affinity, sidecars and spreading do not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.workloads.scheduling import TOLERATION_EFFECTS, TOLERATION_OPERATORS, build_tolerations
from oam_operator.oam.catalog.workloads.schemas import common_schema
from oam_operator.oam.catalog.workloads.values import opt_int
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
from oam_operator.oam.document.schema import PropertySchema as P
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

PORT_NAME = "http"


class DaemonSetConfig:
    def __init__(self, workload: Workload, port: int, tolerations: list[Object]) -> None:
        self.workload = workload
        self.port = port
        self.tolerations = tolerations

    def generate(self, app: TreeApplication) -> list[Object]:
        w = self.workload
        pod = w.pod_spec([container_port(PORT_NAME, self.port)] if self.port > 0 else None)
        if self.tolerations:
            pod["tolerations"] = [dict(t) for t in self.tolerations]
        daemonset = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": w.metadata(),
            "spec": {"selector": w.selector(), "template": w.pod_template(pod), "updateStrategy": {}},
        }
        objects = [daemonset]
        if self.port > 0:
            spec = {"type": "ClusterIP", "selector": w.labels(), "ports": [service_port(PORT_NAME, self.port)]}
            objects.append(service(w.name, w.namespace, w.labels(), spec))
        return [*objects, w.service_account(), *w.claims()]

    def service_port(self) -> int:
        return max(self.port, 0)

    def backend_service_name(self) -> str:
        return self.workload.name


@component("daemonset")
class DaemonSetHandler(BuiltinType):
    def property_schema(self) -> Schema:
        toleration = P(
            type="object",
            description="One toleration of a node taint.",
            properties={
                "key": P(type="string", description="Taint key; empty with operator Exists tolerates every taint."),
                "operator": P(
                    type="string",
                    enum=list(TOLERATION_OPERATORS),
                    description="Exists, or Equal (compare value); Exists without a key, Equal with one by default.",
                ),
                "value": P(type="string", description="Taint value, for operator Equal."),
                "effect": P(
                    type="string",
                    enum=list(TOLERATION_EFFECTS),
                    description="Taint effect to tolerate; empty tolerates every effect.",
                ),
            },
        )
        return {
            **common_schema(sidecars=False, affinity=False),
            "port": P(
                type="integer", description="Container and Service port (named http); no Service when unset or 0."
            ),
            "tolerations": P(type="array", description="Taints the pods tolerate.", items=toleration),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> DaemonSetConfig:
        props = component.properties
        require_image(props)
        port = opt_int(props, "port", 0)
        tolerations = build_tolerations(props.get("tolerations"))
        options = WorkloadOptions(port_name=PORT_NAME if port > 0 else None)
        return DaemonSetConfig(parse_workload(component, namespace, options), port, tolerations)
