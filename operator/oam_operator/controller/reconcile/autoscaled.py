"""The replicas of an autoscaled workload are the autoscaler's (docs/operator.md#drift).

The ``scaler`` trait emits a HorizontalPodAutoscaler next to a Deployment that still carries
``spec.replicas`` (as ``kurel build`` prints it, and ``oam-operator build`` with it). Applied as
is, the operator's field manager would own ``spec.replicas``: every change the autoscaler made
would look like drift and be undone, and every reapply would reset the scale. So the objects
the operator applies leave ``spec.replicas`` out of any workload a HorizontalPodAutoscaler of
the same Application scales: the autoscaler owns it alone, and the API server's default (1)
holds until the autoscaler first acts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.reconciler.identity import split_api_version

__all__ = ["release_autoscaled_replicas"]


def _group(api_version: str) -> str:
    return split_api_version(api_version)[0]


def _targets(objects: Sequence[Mapping[str, Any]]) -> set[tuple[str, str, str, str]]:
    """(group, kind, namespace, name) of every workload an HPA of ``objects`` scales."""
    found = set()
    for obj in objects:
        if obj.get("kind") != "HorizontalPodAutoscaler" or _group(str(obj.get("apiVersion") or "")) != "autoscaling":
            continue
        ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
        if not isinstance(ref, Mapping) or not ref.get("name") or not ref.get("kind"):
            continue
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        found.add((_group(str(ref.get("apiVersion") or "")), str(ref["kind"]), namespace, str(ref["name"])))
    return found


def release_autoscaled_replicas(objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``objects`` with ``spec.replicas`` left out of every autoscaled workload (copies of those;
    the others as they are)."""
    targets = _targets(objects)
    if not targets:
        return list(objects)
    released: list[Mapping[str, Any]] = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        ident = (_group(str(obj.get("apiVersion") or "")), str(obj.get("kind") or ""),
                 str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        spec = obj.get("spec")
        if ident in targets and isinstance(spec, Mapping) and "replicas" in spec:
            obj = copy.deepcopy(dict(obj))
            del obj["spec"]["replicas"]
        released.append(obj)
    return released
