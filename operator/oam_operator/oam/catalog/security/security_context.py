"""The ``security-context`` trait (docs/transform.md#access-and-security): pod and container security contexts by PSA
level.

The trait makes a component satisfy a Pod Security Admission level without per-workload
boilerplate: for ``restricted`` it writes the restricted set (non-root, no privilege
escalation, read-only root filesystem, all capabilities dropped, RuntimeDefault seccomp),
replacing what the component authored, and refuses overrides that would break the level.
``baseline`` and ``privileged`` write only what the author set.

Decisions where the spec is silent: booleans are checked in the order ``runAsNonRoot``,
``allowPrivilegeEscalation``, ``readOnlyRootFilesystem``, integers in the order
``runAsUser``, ``runAsGroup``, ``fsGroup`` (a YAML ``1000.0`` counts as 1000), all before the
``restricted`` conflicts; ``runAsNonRoot`` is only written for ``restricted`` (the spec lists
it nowhere else); the pod ``securityContext`` is replaced as a whole; every workload among the
component's objects is decorated, ephemeral containers are not.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import Decoration, decorate, whole_number
from oam_operator.oam.catalog.workloads.pod_specs import SECURITY_KINDS, pod_specs
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_at
from oam_operator.oam.formatting.gofmt import go_type_name, go_value

TYPE = "security-context"
LEVELS = ("restricted", "baseline", "privileged")
BOOLEANS = ("runAsNonRoot", "allowPrivilegeEscalation", "readOnlyRootFilesystem")
INTEGERS = ("runAsUser", "runAsGroup", "fsGroup")
RUNTIME_DEFAULT = {"type": "RuntimeDefault"}
#: for ``restricted``, the value an override may not take
_RESTRICTED_CONFLICTS = (
    ("allowPrivilegeEscalation", True),
    ("runAsNonRoot", False),
    ("readOnlyRootFilesystem", False),
)


@trait(TYPE)
class SecurityContextTrait(BuiltinType):
    def property_schema(self) -> Schema:
        schema = {
            "psaLevel": PropertySchema(
                type="string",
                required=True,
                enum=list(LEVELS),
                description="Pod Security Admission level the pods must satisfy.",
            ),
            "runAsNonRoot": PropertySchema(type="boolean", description="Containers must run as a non-root user."),
            "allowPrivilegeEscalation": PropertySchema(
                type="boolean", description="Whether a process may gain more privileges than its parent."
            ),
            "readOnlyRootFilesystem": PropertySchema(
                type="boolean", description="Mount the containers' root filesystem read-only."
            ),
        }
        schema.update(
            {
                "runAsUser": PropertySchema(type="integer", description="UID the pod's processes run as."),
                "runAsGroup": PropertySchema(type="integer", description="GID the pod's processes run as."),
                "fsGroup": PropertySchema(type="integer", description="Supplemental group owning mounted volumes."),
            }
        )
        return schema

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        level, booleans, integers = _parse(trait.properties)
        decorate(app, _decoration(level, booleans, integers))


def _parse(props: dict[str, Any]) -> tuple[str, dict[str, bool], dict[str, int]]:
    prefix = f"{TYPE}: "
    level = props.get("psaLevel")
    if "psaLevel" not in props:
        raise ValidationError(f"{prefix}psaLevel is required")
    if not isinstance(level, str):
        raise ValidationError(f"{prefix}psaLevel must be a string, got {go_type_name(level)}")
    if level not in LEVELS:
        raise ValidationError(f"{prefix}{unknown_at('psaLevel', level, LEVELS)}")
    booleans: dict[str, bool] = {}
    for key in BOOLEANS:
        value = props.get(key)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise ValidationError(f"{prefix}{key} must be a bool, got {go_type_name(value)}")
        booleans[key] = value
    integers: dict[str, int] = {}
    for key in INTEGERS:
        value = props.get(key)
        if value is None:
            continue
        number = whole_number(value)
        if number is None:
            raise ValidationError(f"{prefix}{key}: expected integer, got {go_type_name(value)}")
        integers[key] = number
    if level == "restricted":
        for key, refused in _RESTRICTED_CONFLICTS:
            if booleans.get(key) is refused:
                raise ValidationError(f"{prefix}{key}: {go_value(refused)} is incompatible with psaLevel restricted")
    return level, booleans, integers


def _decoration(level: str, booleans: dict[str, bool], integers: dict[str, int]) -> Decoration:
    def pod_context() -> Object:
        context: Object = {}
        if level == "restricted":
            context = {"runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}
            if "runAsNonRoot" in booleans:
                context["runAsNonRoot"] = booleans["runAsNonRoot"]
        context.update(integers)
        return context

    def container_context() -> Object:
        if level == "restricted":
            context: Object = {
                "allowPrivilegeEscalation": False,
                "runAsNonRoot": True,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
                "seccompProfile": dict(RUNTIME_DEFAULT),
            }
            context.update(booleans)
            return context
        return {k: v for k, v in booleans.items() if k != "runAsNonRoot"}

    def decoration(objects: list[Object]) -> None:
        for spec in pod_specs(objects, SECURITY_KINDS):
            spec["securityContext"] = pod_context()
            for key in ("initContainers", "containers"):
                containers = spec.get(key)
                for container in containers if isinstance(containers, list) else []:
                    if isinstance(container, dict):
                        container["securityContext"] = container_context()

    return decoration
