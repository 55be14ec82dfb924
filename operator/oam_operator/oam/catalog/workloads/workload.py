"""Shared workload properties and objects (docs/transform.md#shared-workload-properties).

``webservice``, ``worker``, ``statefulset``, ``daemonset`` and ``cronjob`` run one main
container (named after the component) built from the same properties; this module parses
those properties once (:func:`parse_workload`) and builds the pieces every workload shares:
the main container, the pod template, the ``ServiceAccount`` and the claims of ``pvc``
volumes. Each type module adds its own controller object and Service.

Every pod runs as its own ServiceAccount (named after the component, token not mounted), so
RBAC (the ``rbac`` trait) can grant a component exactly what it needs and nothing by default.

Checks run in this order, the first failure wins: ``image``; the type's own properties (in
the type module); ``command``/``args``, ``env``, ``envFrom``, ``resources``, ``probes``,
``lifecycle``, ``securityContext``, ``workingDir``, ``volumes``, ``initContainers``,
``sidecars``, ``affinity``.

Traits reach these objects through the engine's interface: routing traits read
``service_port()``/``backend_service_name()`` of the config, decorating traits modify the
objects ``generate()`` returns (the pod template is at ``spec.template``, for a CronJob at
``spec.jobTemplate.spec.template``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.catalog.workloads.containers import PULL_POLICY, build_containers
from oam_operator.oam.catalog.workloads.env import build_env, build_env_from
from oam_operator.oam.catalog.workloads.image import check_image
from oam_operator.oam.catalog.workloads.probes import build_lifecycle, build_probes
from oam_operator.oam.catalog.workloads.resources import build_resources
from oam_operator.oam.catalog.workloads.scheduling import build_affinity
from oam_operator.oam.catalog.workloads.schemas import security_context_schema
from oam_operator.oam.catalog.workloads.security import check_security_context
from oam_operator.oam.catalog.workloads.values import ABSENT, opt_list, strings
from oam_operator.oam.catalog.workloads.volumes import Volumes, build_volumes, claim_object
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import check_value
from oam_operator.oam.errors import PropertyError, ValidationError
from oam_operator.oam.formatting.gofmt import go_type_name

Object = dict[str, Any]

SECURITY_CONTEXT_PREFIX = "invalid securityContext configuration: "


@dataclass(frozen=True)
class WorkloadOptions:
    """What a type allows of the shared properties.

    ``port_name`` is the name of the main container's own port that probe and lifecycle
    handlers may refer to (``None``: the type declares no port, so names are refused).
    """

    port_name: str | None = None
    sidecars: bool = False
    affinity: bool = False


@dataclass
class Workload:
    """The parsed shared properties of one component."""

    name: str
    namespace: str
    container: Object
    volumes: Volumes = field(default_factory=Volumes)
    init_containers: list[Object] = field(default_factory=list)
    sidecars: list[Object] = field(default_factory=list)
    affinity: Object | None = None

    def labels(self) -> dict[str, str]:
        return {"app": self.name}

    def metadata(self) -> Object:
        return {"labels": self.labels(), "name": self.name, "namespace": self.namespace}

    def main_container(self, ports: list[Object] | None = None, first_mounts: list[Object] | None = None) -> Object:
        """The main container with its ports and mounts (``first_mounts`` before the volume mounts)."""
        container = copy.deepcopy(self.container)
        if ports:
            container["ports"] = copy.deepcopy(ports)
        mounts = [*(first_mounts or []), *self.volumes.mounts]
        if mounts:
            container["volumeMounts"] = copy.deepcopy(mounts)
        return container

    def pod_spec(self, ports: list[Object] | None = None, first_mounts: list[Object] | None = None) -> Object:
        """The pod spec shared by every workload type; the type adds its own fields."""
        spec: Object = {
            "containers": [self.main_container(ports, first_mounts), *copy.deepcopy(self.sidecars)],
            "serviceAccountName": self.name,
        }
        if self.init_containers:
            spec["initContainers"] = copy.deepcopy(self.init_containers)
        if self.volumes.volumes:
            spec["volumes"] = copy.deepcopy(self.volumes.volumes)
        if self.affinity:
            spec["affinity"] = copy.deepcopy(self.affinity)
        return spec

    def pod_template(self, spec: Object) -> Object:
        return {"metadata": {"labels": self.labels()}, "spec": spec}

    def selector(self) -> Object:
        return {"matchLabels": self.labels()}

    def service_account(self) -> Object:
        return {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": self.metadata(),
            "automountServiceAccountToken": False,
        }

    def claims(self) -> list[Object]:
        """The PersistentVolumeClaims of ``pvc`` volumes, in volume order (generation time)."""
        return [claim_object(claim, self.namespace, self.labels()) for claim in self.volumes.claims]


def _security_context(value: Any, present: bool) -> Object | None:
    """The container's security context; a present ``null`` is refused, as kurel refuses it."""
    if not present:
        return None
    if not isinstance(value, dict):
        raise ValidationError(f"{SECURITY_CONTEXT_PREFIX}securityContext: must be an object, got {go_type_name(value)}")
    try:
        checked = check_value(security_context_schema(), copy.deepcopy(value), "securityContext")
    except PropertyError as exc:
        raise ValidationError(SECURITY_CONTEXT_PREFIX + exc.message) from exc
    try:
        check_security_context(checked)
    except ValidationError as exc:
        raise ValidationError(SECURITY_CONTEXT_PREFIX + exc.message) from exc
    return {k: v for k, v in checked.items() if v is not None} or None


def require_image(props: Object) -> str:
    """The checked ``image`` property (first check of every workload type)."""
    image = props.get("image")
    if not isinstance(image, str):
        raise ValidationError("required property 'image' missing or not a string")
    check_image(image)
    return image


def parse_workload(component: Component, namespace: str, options: WorkloadOptions) -> Workload:
    """Parse and check the shared properties; the image is checked first."""
    props = component.properties
    name = component.name
    image = require_image(props)
    container: Object = {"name": name, "image": image, "imagePullPolicy": PULL_POLICY}
    command = strings(opt_list(props, "command"))
    if command:
        container["command"] = command
    args = strings(opt_list(props, "args"))
    if args:
        container["args"] = args
    env = build_env(opt_list(props, "env"))
    if env:
        container["env"] = env
    env_from = build_env_from(props.get("envFrom", []))
    if env_from:
        container["envFrom"] = env_from
    container["resources"] = build_resources(props.get("resources"))
    container.update(build_probes(props.get("probes", ABSENT), options.port_name))
    lifecycle = build_lifecycle(props.get("lifecycle", ABSENT), options.port_name)
    if lifecycle:
        container["lifecycle"] = lifecycle
    security_context = _security_context(props.get("securityContext"), "securityContext" in props)
    if security_context:
        container["securityContext"] = security_context
    working_dir = props.get("workingDir", "")
    if not isinstance(working_dir, str):
        raise ValidationError(f"workingDir: must be a string, got {go_type_name(working_dir)}")
    if working_dir:
        container["workingDir"] = working_dir
    volumes = build_volumes(name, props.get("volumes", ABSENT))
    init_containers = build_containers(props.get("initContainers"), "initContainers")
    sidecars = build_containers(props.get("sidecars"), "sidecars", with_ports=True) if options.sidecars else []
    affinity = build_affinity(props.get("affinity"), name) if options.affinity else None
    return Workload(name, namespace, container, volumes, init_containers, sidecars, affinity)


def service(name: str, namespace: str, labels: dict[str, str], spec: Object) -> Object:
    """A ``v1 Service`` object."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": dict(labels), "name": name, "namespace": namespace},
        "spec": spec,
    }


def service_port(name: str, port: int) -> Object:
    """One Service port forwarding ``port`` to the same container port."""
    return {"name": name, "port": port, "targetPort": port, "protocol": "TCP"}


def container_port(name: str, port: int) -> Object:
    return {"name": name, "containerPort": port, "protocol": "TCP"}
