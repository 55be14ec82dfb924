"""The ``volsync`` trait (docs/transform.md#scaling-and-storage): a VolSync restic ``ReplicationSource`` backing up a
PVC.

Which storage and snapshot classes back the copies is a platform matter, so both may come from
a ClusterProfile rendering; the schedule and retention are the team's. The repository Secret
(restic URL and credentials) is expected to exist, named ``C-volsync-secret`` by default.

Decisions where the spec is silent: an empty ``sourcePVC``/``schedule`` counts as missing; an
empty ``copyMethod`` means the default; a YAML ``14.0`` counts as 14; ``retain`` that is not a
mapping is ``'retain' must be a map``; a non-string ``repository``, ``storageClassName`` or
``volumeSnapshotClassName`` is ``'<field>' must be a string`` (in a rendering:
``volsync rendering: <field> must be a string``) and an empty one means unset; the
ReplicationSource carries no labels besides the component label.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, metadata, refuse_rendering_keys, whole_number
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

TYPE = "volsync"
COPY_METHODS = ("Snapshot", "Direct", "Clone")
DEFAULT_COPY_METHOD = "Snapshot"
DEFAULT_PRUNE_INTERVAL_DAYS = 14
RETAIN_DEFAULTS = {"daily": 7, "weekly": 4, "monthly": 3}
INT32_MAX = 2147483647
CLASS_FIELDS = ("storageClassName", "volumeSnapshotClassName")


def _schema() -> Schema:
    retain = {
        period: PropertySchema(
            type="integer", default=default, description=f"{period.capitalize()} snapshots kept (0-2147483647)."
        )
        for period, default in RETAIN_DEFAULTS.items()
    }
    return {
        "sourcePVC": PropertySchema(type="string", required=True, description="The PersistentVolumeClaim to back up."),
        "schedule": PropertySchema(
            type="string", required=True, description="Cron schedule of the backups (passed through as written)."
        ),
        "repository": PropertySchema(
            type="string", description="Secret holding the restic repository settings (default C-volsync-secret)."
        ),
        "copyMethod": PropertySchema(
            type="string",
            default=DEFAULT_COPY_METHOD,
            enum=list(COPY_METHODS),
            description="How the point-in-time copy of the volume is taken.",
        ),
        "storageClassName": PropertySchema(
            type="string", description="Storage class of the temporary copy (unused with Direct)."
        ),
        "volumeSnapshotClassName": PropertySchema(
            type="string", description="VolumeSnapshotClass of the copy (used with Snapshot only)."
        ),
        "pruneIntervalDays": PropertySchema(
            type="integer",
            default=DEFAULT_PRUNE_INTERVAL_DAYS,
            description="Days between restic prune runs (1-2147483647).",
        ),
        "retain": PropertySchema(type="object", properties=retain, description="Snapshots restic keeps."),
    }


@trait(TYPE)
class VolSyncTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, CLASS_FIELDS)
        for field in CLASS_FIELDS:
            value = rendering.get(field)
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"{TYPE} rendering: {field} must be a string")
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        source = _required_string(props, "sourcePVC")
        schedule = _required_string(props, "schedule")
        copy_method = props.get("copyMethod")
        if copy_method is None or copy_method == "":
            copy_method = DEFAULT_COPY_METHOD
        if copy_method not in COPY_METHODS:
            raise ValidationError(
                f"unsupported copyMethod {go_quote(go_value(copy_method))}; supported: {', '.join(COPY_METHODS)}"
            )
        restic: Object = {
            "repository": _string(props, "repository") or f"{out.component}-volsync-secret",
            "copyMethod": copy_method,
            "pruneIntervalDays": _prune_interval(props.get("pruneIntervalDays")),
            "retain": _retain(props.get("retain")),
            "customCA": {},
        }
        storage_class = _string(props, "storageClassName")
        snapshot_class = _string(props, "volumeSnapshotClassName")
        if storage_class and copy_method != "Direct":
            restic["storageClassName"] = storage_class
        if snapshot_class and copy_method == "Snapshot":
            restic["volumeSnapshotClassName"] = snapshot_class
        name = f"{source}-backup"
        obj: Object = {
            "apiVersion": "volsync.backube/v1alpha1",
            "kind": "ReplicationSource",
            "metadata": metadata(name, out.namespace),
            "spec": {"sourcePVC": source, "trigger": {"schedule": schedule}, "restic": restic},
        }
        out.add(TreeApplication(name, out.namespace, FixedObjects([obj]), app.owner))


def _required_string(props: dict[str, Any], key: str) -> str:
    value = props.get(key)
    if not isinstance(value, str) or not value:
        raise ValidationError(f"required property '{key}' missing or not a string")
    return value


def _string(props: dict[str, Any], key: str) -> str:
    value = props.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError(f"'{key}' must be a string")
    return value


def _prune_interval(value: Any) -> int:
    if value is None:
        return DEFAULT_PRUNE_INTERVAL_DAYS
    days = whole_number(value)
    if days is None or not 1 <= days <= INT32_MAX:
        raise ValidationError("'pruneIntervalDays' must be a positive integer")
    return days


def _retain(value: Any) -> Object:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ValidationError("'retain' must be a map")
    retain: Object = {}
    for period, default in RETAIN_DEFAULTS.items():
        raw = value.get(period)
        if raw is None:
            retain[period] = default
            continue
        count = whole_number(raw)
        if count is None or not 0 <= count <= INT32_MAX:
            raise ValidationError(f"'retain.{period}' must be a non-negative integer")
        retain[period] = count
    return retain
