"""The component label (docs/transform.md#the-component-label).

Every object a component owns, and the pod templates of workloads, carry
``<domain>/component: <component>`` so the objects of one component can be selected; an
existing value (authored, from a chart or a passthrough object) is never replaced, and a pod
template is left alone when the workload's selector pins the key to another value.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.document.names import shorten
from oam_operator.oam.engine.handlers import Object

LABEL_VALUE_MAX = 63

# (group, kind) -> (path to the pod template, path to the selector's label map)
_POD_TEMPLATES: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    ("apps", "Deployment"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("apps", "StatefulSet"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("apps", "DaemonSet"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("apps", "ReplicaSet"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("extensions", "Deployment"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("extensions", "DaemonSet"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("extensions", "ReplicaSet"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("batch", "Job"): (("spec", "template"), ("spec", "selector", "matchLabels")),
    ("batch", "CronJob"): (
        ("spec", "jobTemplate", "spec", "template"),
        ("spec", "jobTemplate", "spec", "selector", "matchLabels"),
    ),
    ("", "ReplicationController"): (("spec", "template"), ("spec", "selector")),
    ("", "PodTemplate"): (("template",), None),
}  # fmt: skip


def api_group(api_version: Any) -> str:
    """The group of an ``apiVersion`` (``""`` for the core group)."""
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


def component_label_value(component: str) -> str:
    return shorten(component, LABEL_VALUE_MAX)


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _set_if_absent(holder: dict[str, Any], key: str, value: str) -> None:
    """Set ``metadata.labels[key]`` on ``holder`` unless a value is present."""
    meta = holder.get("metadata")
    if meta is None:
        meta = holder["metadata"] = {}
    if not isinstance(meta, dict):
        return
    labels = meta.get("labels")
    if labels is None:
        labels = meta["labels"] = {}
    if isinstance(labels, dict) and labels.get(key) is None:
        labels[key] = value


def stamp_component_label(obj: Object, key: str, component: str) -> None:
    """Stamp ``key: shorten(component, 63)`` on the object and its pod template, where absent."""
    value = component_label_value(component)
    _set_if_absent(obj, key, value)
    paths = _POD_TEMPLATES.get((api_group(obj.get("apiVersion")), str(obj.get("kind", ""))))
    if paths is None:
        return
    template_path, selector_path = paths
    template = _get(obj, template_path)
    if not isinstance(template, dict):
        return
    if selector_path is not None:
        selector = _get(obj, selector_path)
        if isinstance(selector, dict) and key in selector and selector[key] != value:
            return
    _set_if_absent(template, key, value)
