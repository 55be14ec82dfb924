"""Wiring an ``external-secret``'s produced Secret into the component's workload
(docs/transform.md#certificates-secrets-and-configuration).

A decoration: it runs on the component's generated objects, so it finds the workload whatever
component type made it (a built-in workload, a ``manifests`` or ``passthrough`` Deployment).
Every Deployment, StatefulSet, DaemonSet and CronJob among them is wired, the first container
of each; a component with none of them is refused rather than silently left unwired.
"""

from __future__ import annotations

from oam_operator.oam.catalog.shared.trait_kit import decorate
from oam_operator.oam.catalog.workloads.pod_specs import MOUNT_KINDS, mapping_list, mount_volume, pod_specs
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError

NO_WORKLOAD = (
    "external-secret envFrom/mountPath requires a Deployment, StatefulSet, DaemonSet, or CronJob component; "
    "no supported workload resource was found"
)
RENAME_HINT = "rename the secret via targetSecretName"


def wire_secret(app: TreeApplication, secret: str, env_from: bool, mount_path: str) -> None:
    """Decorate ``app`` so its workloads read ``secret`` as env vars and/or a volume at ``mount_path``."""

    def decoration(objects: list[Object]) -> None:
        specs = pod_specs(objects, MOUNT_KINDS)
        if not specs:
            raise GenerationError(NO_WORKLOAD)
        if env_from:
            for spec in specs:
                containers = spec.get("containers")
                first = containers[0] if isinstance(containers, list) and containers else None
                if isinstance(first, dict):
                    mapping_list(first, "envFrom").append({"secretRef": {"name": secret}})
        if mount_path:
            volume = {"name": secret, "secret": {"secretName": secret}}
            mount_volume(objects, volume, mount_path, "external-secret mountPath", RENAME_HINT)

    decorate(app, decoration)
