"""The ``pvc`` trait (docs/transform.md#scaling-and-storage): a standalone PersistentVolumeClaim named as written.

Unlike a workload's ``pvc`` volume, the claim keeps its authored name (it is meant to be shared
or referenced by name). ``storageClassName`` may come from a ClusterProfile rendering so the
platform chooses the storage class; the size is checked on the effective value and reported
with the component context, as kurel does.

Decisions where the spec is silent: an empty ``name`` counts as missing; a non-string
``storageClassName`` is ``storageClassName must be a string`` (also in a rendering:
``pvc rendering: storageClassName must be a string``); ``accessModes`` that is not a list is
``accessModes must be an array``; the claim is not refused when ``ReadWriteOncePod`` is
combined with other modes (only workload volumes are checked for that, docs/transform.md#shared-workload-properties).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, app_labels, metadata, refuse_rendering_keys
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import EffectiveValueError, ValidationError
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote, go_value
from oam_operator.oam.formatting.quantity import QuantityError, canonical_quantity

TYPE = "pvc"
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
DEFAULT_ACCESS_MODES = ["ReadWriteOnce"]


@trait(TYPE)
class PVCTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            "name": PropertySchema(type="string", required=True, description="Name of the claim (not qualified)."),
            "size": PropertySchema(description="Requested storage, a quantity (required; e.g. 5Gi)."),
            "storageClassName": PropertySchema(
                type="string", description="Storage class of the claim (may come from the ClusterProfile)."
            ),
            "accessModes": PropertySchema(
                type="array",
                default=list(DEFAULT_ACCESS_MODES),
                items=PropertySchema(type="string", enum=list(ACCESS_MODES), description="An access mode."),
                description="Access modes of the claim.",
            ),
        }

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ("storageClassName",))
        value = rendering.get("storageClassName")
        if value is not None and not isinstance(value, str):
            raise ValidationError("pvc rendering: storageClassName must be a string")
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        name = props.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError("required property 'name' missing or not a string")
        size: str | None = None
        raw = props.get("size")
        if raw is not None and raw != "":
            try:
                size = canonical_quantity(raw)
            except QuantityError as exc:
                text = raw if isinstance(raw, str) else go_value(raw)
                raise ValidationError(f"invalid PVC size {go_quote(text)}: {exc.message}") from exc
        storage_class = props.get("storageClassName")
        if storage_class is not None and not isinstance(storage_class, str):
            raise ValidationError("storageClassName must be a string")
        modes = _access_modes(props.get("accessModes"))
        if size is None:
            raise EffectiveValueError(
                f"PVC {go_quote(name)} size is required "
                "(set it on the trait or via an EnvironmentPolicy storage default)"
            )
        spec: Object = {"accessModes": modes, "resources": {"requests": {"storage": size}}}
        if storage_class:
            spec["storageClassName"] = storage_class
        obj: Object = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": metadata(name, out.namespace, app_labels(out.component)),
            "spec": spec,
        }
        out.add(TreeApplication(name, out.namespace, FixedObjects([obj]), app.owner))


def _access_modes(value: Any) -> list[str]:
    if value is None:
        return list(DEFAULT_ACCESS_MODES)
    if not isinstance(value, list):
        raise ValidationError("accessModes must be an array")
    if not value:
        raise ValidationError("accessModes must not be empty when specified")
    for mode in value:
        if mode not in ACCESS_MODES:
            raise ValidationError(f"accessModes: {unknown_value('accessMode', go_value(mode), ACCESS_MODES)}")
    return list(value)
