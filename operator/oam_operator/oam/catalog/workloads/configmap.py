"""The ``configmap`` trait (docs/transform.md#certificates-secrets-and-configuration): a ConfigMap, optionally mounted
into the workload.

Data values are stringified as Go's ``%v`` does, so a number or boolean written unquoted in
YAML gives the same ConfigMap kurel gives. The mount is a decoration: it needs the workload's
objects, so its refusals are generation errors (not wrapped with the trait).

Decisions where the spec is silent: an empty ``name`` counts as missing; ``data`` that is not
a mapping is refused (``'data' must be a map``); a non-string ``mountPath`` is refused
(``'mountPath' must be a string``) and an empty one means no mount; the mount applies to every
Deployment, StatefulSet, DaemonSet and CronJob among the component's objects.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import (
    Decoration,
    FixedObjects,
    app_labels,
    decorate,
    metadata,
    refuse_rendering_keys,
    stringify_map,
)
from oam_operator.oam.catalog.workloads.pod_specs import mount_volume
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError, ValidationError

TYPE = "configmap"
NO_WORKLOAD = (
    "configmap mountPath requires a Deployment, StatefulSet, DaemonSet, or CronJob component; "
    "no supported workload resource was found"
)


@trait(TYPE)
class ConfigMapTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            "name": PropertySchema(
                type="string", required=True, description="Name of the ConfigMap (and of its volume when mounted)."
            ),
            "data": PropertySchema(
                type="object",
                additional_properties=True,
                description="The ConfigMap's data; values are stringified as Go's %v prints them.",
            ),
            "mountPath": PropertySchema(
                type="string",
                description="Mount the ConfigMap as a volume at this path in the workload's first container.",
            ),
        }

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ())
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        name = props.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError("required property 'name' missing or not a string")
        data = props.get("data")
        if data is not None and not isinstance(data, dict):
            raise ValidationError("'data' must be a map")
        mount_path = props.get("mountPath")
        if mount_path is not None and not isinstance(mount_path, str):
            raise ValidationError("'mountPath' must be a string")
        obj: Object = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata(name, out.namespace, app_labels(out.component)),
        }
        if data:
            obj["data"] = stringify_map(data)
        out.add(TreeApplication(name, out.namespace, FixedObjects([obj]), app.owner))
        if mount_path:
            decorate(app, _mount(name, mount_path))


def _mount(name: str, mount_path: str) -> Decoration:
    volume = {"name": name, "configMap": {"name": name}}

    def decoration(objects: list[Object]) -> None:
        hint = "rename the configmap via the 'name' property"
        if mount_volume(objects, volume, mount_path, "configmap mountPath", hint) == 0:
            raise GenerationError(NO_WORKLOAD)

    return decoration
