"""The ``scaler`` trait (docs/transform.md#scaling-and-storage): a HorizontalPodAutoscaler, optionally a
PodDisruptionBudget.

Only ``webservice`` and ``worker`` (Deployments) may carry it; document validation refuses it
elsewhere (docs/transform.md#document-validation). The replica bounds are checked on the effective values (after the
ClusterProfile rendering is merged) and reported with the component context, as kurel does,
because a platform default may be what makes them wrong.

Decisions where the spec is silent: every numeric property is checked like ``minReplicas``
(``<field> must be a whole number``, a YAML ``2.0`` counts as 2); ``memoryUtilization`` has
the same 1–100 range message as ``cpuUtilization``; a non-boolean ``enablePDB`` is
``enablePDB must be a bool``.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, app_labels, metadata, whole_number
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import EffectiveValueError, ValidationError

TYPE = "scaler"
DEFAULT_CPU_UTILIZATION = 80
PDB_MIN_AVAILABLE = "50%"


def _whole(props: dict[str, Any], key: str) -> int | None:
    raw = props.get(key)
    if raw is None:
        return None
    value = whole_number(raw)
    if value is None:
        raise ValidationError(f"{key} must be a whole number")
    return value


def _utilization(props: dict[str, Any], key: str) -> int | None:
    value = _whole(props, key)
    if value is not None and not 1 <= value <= 100:
        raise ValidationError(f"{key} must be between 1 and 100, got {value}")
    return value


def _metric(resource: str, utilization: int) -> Object:
    return {
        "type": "Resource",
        "resource": {"name": resource, "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


@trait(TYPE)
class ScalerTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            "minReplicas": PropertySchema(type="integer", description="Lower replica bound (required, >= 1)."),
            "maxReplicas": PropertySchema(
                type="integer", description="Upper replica bound (required, >= minReplicas)."
            ),
            "cpuUtilization": PropertySchema(
                type="integer",
                default=DEFAULT_CPU_UTILIZATION,
                description="Target average CPU utilisation in percent (1-100); 80 when no utilisation is set.",
            ),
            "memoryUtilization": PropertySchema(
                type="integer", description="Target average memory utilisation in percent (1-100)."
            ),
            "enablePDB": PropertySchema(
                type="boolean",
                default=False,
                description="Also create a PodDisruptionBudget (minAvailable 50%); needs minReplicas >= 2.",
            ),
        }

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        min_replicas = _whole(props, "minReplicas")
        max_replicas = _whole(props, "maxReplicas")
        cpu = _utilization(props, "cpuUtilization")
        memory = _utilization(props, "memoryUtilization")
        enable_pdb = props.get("enablePDB")
        if enable_pdb is not None and not isinstance(enable_pdb, bool):
            raise ValidationError("enablePDB must be a bool")
        low, high = min_replicas or 0, max_replicas or 0
        if low < 1:
            raise EffectiveValueError(
                f"minReplicas must be >= 1, got {low} (set it on the trait or via an EnvironmentPolicy scaler default)"
            )
        if high < low:
            raise EffectiveValueError(f"maxReplicas ({high}) must be >= minReplicas ({low})")
        if enable_pdb and low < 2:
            raise EffectiveValueError(
                f"enablePDB requires minReplicas >= 2 (got {low}); with 1 replica PDB blocks all voluntary disruptions"
            )
        if cpu is None and memory is None:
            cpu = DEFAULT_CPU_UTILIZATION
        metrics = [_metric(name, value) for name, value in (("cpu", cpu), ("memory", memory)) if value is not None]
        component = out.component
        labels = app_labels(component)
        objects: list[Object] = [
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": metadata(f"{component}-hpa", out.namespace, labels),
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": component},
                    "minReplicas": low,
                    "maxReplicas": high,
                    "metrics": metrics,
                },
            }
        ]
        if enable_pdb:
            objects.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": metadata(f"{component}-pdb", out.namespace, dict(labels)),
                    "spec": {"minAvailable": PDB_MIN_AVAILABLE, "selector": {"matchLabels": dict(labels)}},
                }
            )
        out.add(TreeApplication(f"{component}-scaler", out.namespace, FixedObjects(objects), app.owner))
