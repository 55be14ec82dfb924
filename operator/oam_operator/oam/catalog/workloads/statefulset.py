"""The ``statefulset`` component (docs/transform.md#workload-components): a StatefulSet behind a headless Service.

Objects, in order: ``StatefulSet C``, the headless ``Service <serviceName>``,
``ServiceAccount C``, the claims of ``pvc`` volumes. Each volume-claim template gives every
replica its own claim and is mounted before the ``volumes`` mounts. Routing traits reach it
through ``serviceName``.

Decisions recorded here: ``volumeClaimTemplates`` that is not a list fails with
``volumeClaimTemplates: must be an array, got <T>``; a template's ``accessModes`` are checked
as a ``pvc`` volume's (prefix ``volumeClaimTemplate "<n>": ``); ``storageClass`` becomes
``storageClassName`` whenever it is set, also to ``""``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oam_operator.oam.catalog.workloads.schemas import common_schema, replicas_schema
from oam_operator.oam.catalog.workloads.values import opt_int, opt_str
from oam_operator.oam.catalog.workloads.volumes import DEFAULT_ACCESS_MODES, access_modes
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
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value
from oam_operator.oam.formatting.quantity import QuantityError, canonical_quantity

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

PORT_NAME = "tcp"
DEFAULT_REPLICAS = 1


@dataclass
class ClaimTemplate:
    name: str
    mount_path: str
    template: Object


def _required(entry: Object, key: str) -> str | None:
    value = entry.get(key)
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else go_value(value)


def parse_claim_templates(value: Any) -> list[ClaimTemplate]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"volumeClaimTemplates: must be an array, got {go_type_name(value)}")
    templates: list[ClaimTemplate] = []
    for entry in value:
        if not isinstance(entry, dict):
            raise ValidationError("volumeClaimTemplates: each entry must be a mapping")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError("volumeClaimTemplate entry missing required field 'name'")
        quoted = go_quote(name)
        size = _required(entry, "size")
        if size is None:
            raise ValidationError(f"volumeClaimTemplate {quoted} missing required field 'size'")
        mount_path = _required(entry, "mountPath")
        if mount_path is None:
            raise ValidationError(f"volumeClaimTemplate {quoted} missing required field 'mountPath'")
        try:
            storage = canonical_quantity(entry["size"])
        except QuantityError as exc:
            raise ValidationError(
                f"volumeClaimTemplate {quoted}: invalid size {go_quote(size)}: {exc.message}"
            ) from exc
        spec: Object = {
            "accessModes": access_modes(entry.get("accessModes"), f"volumeClaimTemplate {quoted}: "),
            "resources": {"requests": {"storage": storage}},
        }
        storage_class = opt_str(entry, "storageClass", f"volumeClaimTemplate {quoted}: storageClass")
        if storage_class is not None:
            spec["storageClassName"] = storage_class
        templates.append(ClaimTemplate(name, mount_path, {"metadata": {"name": name}, "spec": spec, "status": {}}))
    return templates


class StatefulSetConfig:
    def __init__(
        self, workload: Workload, replicas: int, port: int, service_name: str, templates: list[ClaimTemplate]
    ) -> None:
        self.workload = workload
        self.replicas = replicas
        self.port = port
        self.service_name = service_name
        self.templates = templates

    def _statefulset(self) -> Object:
        w = self.workload
        ports = [container_port(PORT_NAME, self.port)] if self.port > 0 else None
        mounts = [{"name": t.name, "mountPath": t.mount_path} for t in self.templates]
        spec: Object = {
            "replicas": self.replicas,
            "selector": w.selector(),
            "serviceName": self.service_name,
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {},
            "template": w.pod_template(w.pod_spec(ports, mounts)),
        }
        if self.templates:
            spec["volumeClaimTemplates"] = [copy.deepcopy(t.template) for t in self.templates]
        return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": w.metadata(), "spec": spec}

    def generate(self, app: TreeApplication) -> list[Object]:
        w = self.workload
        spec: Object = {"clusterIP": "None", "selector": w.labels()}
        if self.port > 0:
            spec["ports"] = [service_port(PORT_NAME, self.port)]
        return [
            self._statefulset(),
            service(self.service_name, w.namespace, w.labels(), spec),
            w.service_account(),
            *w.claims(),
        ]

    def service_port(self) -> int:
        return max(self.port, 0)

    def backend_service_name(self) -> str:
        return self.service_name


@component("statefulset")
class StatefulSetHandler(BuiltinType):
    def property_schema(self) -> Schema:
        template = P(
            type="object",
            description="A claim template: every replica gets its own claim, mounted into the main container.",
            properties={
                "name": P(type="string", required=True, description="Name of the template (and of the mount)."),
                "size": P(required=True, description="Requested storage (a quantity)."),
                "mountPath": P(type="string", required=True, description="Where the main container mounts it."),
                "storageClass": P(type="string", description="Storage class of the claims."),
                "accessModes": P(
                    type="array",
                    description="Access modes of the claims.",
                    default=list(DEFAULT_ACCESS_MODES),
                    items=P(
                        type="string", description="ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod."
                    ),
                ),
            },
        )
        return {
            **common_schema(sidecars=True, affinity=True),
            "replicas": replicas_schema(),
            "port": P(type="integer", description="Container and Service port (named tcp); none when unset or 0."),
            "serviceName": P(
                type="string",
                description=(
                    "Name of the headless Service (the StatefulSet's serviceName); the component name by default."
                ),
            ),
            "volumeClaimTemplates": P(type="array", description="Per-replica persistent volumes.", items=template),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> StatefulSetConfig:
        props = component.properties
        require_image(props)
        replicas = opt_int(props, "replicas", DEFAULT_REPLICAS)
        port = opt_int(props, "port", 0)
        service_name = opt_str(props, "serviceName") or component.name
        templates = parse_claim_templates(props.get("volumeClaimTemplates"))
        options = WorkloadOptions(port_name=PORT_NAME if port > 0 else None, sidecars=True, affinity=True)
        workload = parse_workload(component, namespace, options)
        return StatefulSetConfig(workload, replicas, port, service_name, templates)
