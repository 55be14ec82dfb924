"""Finding pod specs in a component's generated objects, for decorating traits
(docs/transform.md#certificates-secrets-and-configuration, docs/transform.md#access-and-security).

Objects are plain mappings, whichever component type made them (a built-in workload, a
``manifests`` or ``passthrough`` object), so workloads are recognised by API group and kind,
whatever the version.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.engine.labels import api_group
from oam_operator.oam.errors import GenerationError
from oam_operator.oam.formatting.gofmt import go_quote

_TEMPLATE = ("spec", "template", "spec")
_CRONJOB_TEMPLATE = ("spec", "jobTemplate", "spec", "template", "spec")

#: (group, kind) → path to the pod spec
POD_SPEC_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): _TEMPLATE,
    ("apps", "StatefulSet"): _TEMPLATE,
    ("apps", "DaemonSet"): _TEMPLATE,
    ("batch", "Job"): _TEMPLATE,
    ("batch", "CronJob"): _CRONJOB_TEMPLATE,
}

#: the workloads ``configmap``/``external-secret`` mounts apply to (no plain Job)
MOUNT_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("batch", "CronJob")})
#: the workloads ``security-context`` applies to
SECURITY_KINDS = frozenset(POD_SPEC_PATHS)


def _ensure(holder: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    """The mapping at ``path``, created where absent; ``None`` when a non-mapping is in the way."""
    node: Any = holder
    for key in path:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            return None
        node = child
    return node if isinstance(node, dict) else None


def pod_specs(objects: list[Object], kinds: frozenset[tuple[str, str]]) -> list[dict[str, Any]]:
    """The pod spec of every object of one of ``kinds``, in object order."""
    specs: list[dict[str, Any]] = []
    for obj in objects:
        key = (api_group(obj.get("apiVersion")), str(obj.get("kind", "")))
        if key not in kinds:
            continue
        spec = _ensure(obj, POD_SPEC_PATHS[key])
        if spec is not None:
            specs.append(spec)
    return specs


def mapping_list(holder: dict[str, Any], key: str) -> list[Any]:
    """``holder[key]`` as a list, created empty where absent."""
    value = holder.get(key)
    if not isinstance(value, list):
        value = holder[key] = []
    return value


def mount_volume(objects: list[Object], volume: dict[str, Any], mount_path: str, owner: str, hint: str) -> int:
    """Add ``volume`` to every mountable workload and mount it on its first container.

    ``owner`` names the trait in messages (``configmap mountPath``), ``hint`` says how to rename
    the colliding volume. A name or mount path already in use is refused rather than shadowed.
    Returns the number of workloads decorated (0: the caller refuses the component).
    """
    specs = pod_specs(objects, MOUNT_KINDS)
    name = volume["name"]
    for spec in specs:
        volumes = mapping_list(spec, "volumes")
        if any(isinstance(v, dict) and v.get("name") == name for v in volumes):
            raise GenerationError(f"{owner}: volume {go_quote(name)} already exists on the workload; {hint}")
        containers = spec.get("containers")
        first = containers[0] if isinstance(containers, list) and containers else None
        mounts = mapping_list(first, "volumeMounts") if isinstance(first, dict) else None
        for mount in mounts or []:
            if isinstance(mount, dict) and mount.get("mountPath") == mount_path:
                used_by = str(mount.get("name", ""))
                raise GenerationError(
                    f"{owner}: mountPath {go_quote(mount_path)} is already used by volume {go_quote(used_by)} on the "
                    "workload; change the mountPath or the colliding volume's mount"
                )
        volumes.append(copy.deepcopy(volume))
        if mounts is not None:
            mounts.append({"name": name, "mountPath": mount_path})
    return len(specs)
